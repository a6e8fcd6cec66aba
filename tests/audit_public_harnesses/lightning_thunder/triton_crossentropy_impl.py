# Audit harness for tests/audit_public_corpus/lightning_thunder/triton_crossentropy_impl.py: cross_entropy(input,
# target) with per-row losses. The file registers itself with thunder's executor registry at import; thunder is not
# installed here, so the three names it imports get stand-ins (they only record the registration).
import sys
import types

import torch
import triton

_thunder = types.ModuleType("thunder")
_extend = types.ModuleType("thunder.extend")
_executors = types.ModuleType("thunder.executors")
_utils = types.ModuleType("thunder.executors.triton_utils")
_ltorch = types.ModuleType("thunder.torch")


class OperatorExecutor:
    def __init__(self, *a, **k):
        pass

    def register_operator(self, *a, **k):
        return None

    def register_implementation(self, *a, **k):
        return None


_extend.OperatorExecutor = OperatorExecutor
_extend.register_executor = lambda ex: None
_utils.triton_version = lambda: triton.__version__
_utils.is_triton_version_at_least = lambda v: True
_ltorch.cross_entropy = None
_executors.triton_utils = _utils
_thunder.extend, _thunder.executors, _thunder.torch = _extend, _executors, _ltorch
for name, mod in (("thunder", _thunder), ("thunder.extend", _extend), ("thunder.executors", _executors),
                  ("thunder.executors.triton_utils", _utils), ("thunder.torch", _ltorch)):
    sys.modules.setdefault(name, mod)

ENTRY = "cross_entropy"
AUDIT_SHAPE = (6, 100)


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n), case.randint(0, max(n, 1), (m,)), None, -100, "none")


def reference(logits, target, weight=None, ignore_index=-100, reduction="mean"):
    return torch.nn.functional.cross_entropy(logits, target, weight=weight, ignore_index=ignore_index,
                                             reduction=reduction)
