# Audit harness for tests/audit_public_corpus/sglang/fused_rmsnorm.py: fused_dual_residual_rmsnorm(x, residual,
# weight1, weight2, eps) -> (rmsnorm(residual + rmsnorm(x) * w1) * w2, residual + rmsnorm(x) * w1) on [bs, hidden].
# The file imports sglang.srt.utils (not installed here) only for is_hip(): a stand-in that says no.
import sys
import types

import torch

_sg, _srt, _utils = (types.ModuleType(n) for n in ("sglang", "sglang.srt", "sglang.srt.utils"))
_utils.is_hip = lambda: False
_sg.srt, _srt.utils = _srt, _utils
for _name, _mod in (("sglang", _sg), ("sglang.srt", _srt), ("sglang.srt.utils", _utils)):
    sys.modules.setdefault(_name, _mod)

ENTRY = "fused_dual_residual_rmsnorm"
AUDIT_SHAPE = (5, 300)


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n), case.randn(m, n), case.randn(n), case.randn(n), 1e-6)


def _rms(x, w, eps):
    return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def reference(x, residual, weight1, weight2, eps):
    mid = residual + _rms(x, weight1, eps)
    return _rms(mid, weight2, eps), mid
