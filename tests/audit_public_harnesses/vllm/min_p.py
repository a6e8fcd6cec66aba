# Audit harness for tests/audit_public_corpus/vllm/min_p.py: apply_min_p(logits, expanded_idx_mapping, min_p)
# masks, in place, the logits of each token below max + log(min_p) of its request to -inf (min_p 0: untouched);
# logits [tokens, vocab], expanded_idx_mapping [tokens] (token -> request state), min_p [requests] in [0, 1].
# The file imports vllm.triton_utils (triton, tl) only: a stand-in.
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

ENTRY = "apply_min_p"
AUDIT_SHAPE = (4, 300)


def make_inputs(case):
    t, v = case.shape
    min_p = torch.tensor([0.0, 0.05, 0.1, 0.2] * t, dtype=torch.float32)[:t].to(case.device)
    return (case.randn(t, v), torch.arange(t, dtype=torch.int32, device=case.device), min_p)


def reference(logits, expanded_idx_mapping, min_p):
    p = min_p[expanded_idx_mapping.long()].float()[:, None]
    thr = logits.float().max(dim=-1, keepdim=True).values + torch.log(p)
    logits.masked_fill_((p > 0) & (logits < thr), float("-inf"))
