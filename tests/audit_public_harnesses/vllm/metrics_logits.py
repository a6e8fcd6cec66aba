# Audit harness for tests/audit_public_corpus/vllm/metrics_logits.py: get_num_nans(logits) -> int32 [requests],
# the number of NaN logits of each row of logits [requests, vocab]. The file imports vllm.triton_utils (triton, tl)
# only: a stand-in.
import sys
import types

import torch
import triton
import triton.language as tl

_vllm, _tu = types.ModuleType("vllm"), types.ModuleType("vllm.triton_utils")
_tu.triton, _tu.tl = triton, tl
_vllm.triton_utils = _tu
sys.modules.setdefault("vllm", _vllm)
sys.modules.setdefault("vllm.triton_utils", _tu)

ENTRY = "get_num_nans"
AUDIT_SHAPE = (4, 300)


def make_inputs(case):
    x = case.randn(*case.shape)
    flat = x.view(-1)
    flat[::7] = float("nan")  # a NaN every 7th logit, so rows count differently
    return (x,)


def reference(logits):
    return logits.isnan().sum(dim=-1).to(torch.int32)
