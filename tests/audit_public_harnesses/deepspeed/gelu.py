# Audit harness for tests/audit_public_corpus/deepspeed/gelu.py: gelu(activations) (exact erf GELU).
import sys
import types

import torch

# The file imports deepspeed.accelerator (not installed here) only to assert the tensors are on the accelerator:
# a stand-in that says yes.
_ds, _acc = types.ModuleType("deepspeed"), types.ModuleType("deepspeed.accelerator")


class _Accelerator:
    def on_accelerator(self, t):
        return True


_acc.get_accelerator = lambda: _Accelerator()
_ds.accelerator = _acc
sys.modules.setdefault("deepspeed", _ds)
sys.modules.setdefault("deepspeed.accelerator", _acc)

ENTRY = "gelu"
AUDIT_SHAPE = (3, 700)


def make_inputs(case):
    return (case.randn(*case.shape),)


def reference(x):
    return torch.nn.functional.gelu(x)
