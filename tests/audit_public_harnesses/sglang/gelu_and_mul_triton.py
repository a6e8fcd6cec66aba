# Audit harness for tests/audit_public_corpus/sglang/gelu_and_mul_triton.py: gelu_and_mul_triton(hidden_states)
# -> (gelu(h[:, :d]) * h[:, d:], None) on [bs, 2 d]. The file imports sglang.srt.utils (not installed here) only
# for is_hip(): a stand-in that says no.
import sys
import types

import torch

_sg, _srt, _utils = (types.ModuleType(n) for n in ("sglang", "sglang.srt", "sglang.srt.utils"))
_utils.is_hip = lambda: False
_sg.srt, _srt.utils = _srt, _utils
for _name, _mod in (("sglang", _sg), ("sglang.srt", _srt), ("sglang.srt.utils", _utils)):
    sys.modules.setdefault(_name, _mod)

ENTRY = "gelu_and_mul_triton"
AUDIT_SHAPE = (5, 600)


def make_inputs(case):
    return (case.randn(*case.shape),)


def reference(hidden_states):
    d = hidden_states.shape[1] // 2
    return torch.nn.functional.gelu(hidden_states[:, :d]) * hidden_states[:, d:2 * d], None
