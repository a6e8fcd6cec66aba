# Audit harness for tests/audit_public_corpus/mamba_ssm/k_activations.py: swiglu(xy) = SwiGLU.apply(xy) ->
# silu(x) * y with x, y = xy.chunk(2, dim=-1) over xy [..., 2N]. The file imports
# mamba_ssm.utils.determinism.autotune_configs, not installed here: a stand-in (its non-deterministic path, which
# returns the configs as given); and torch.cuda.device, whose guard fails on CPU tensors (x.device.index is None),
# is a no-op when there is no GPU.
import sys
import types

import torch
import torch.nn.functional as F


def autotune_configs(configs):  # mamba_ssm/utils/determinism.py with MAMBA_DETERMINISTIC unset
    return configs


_names = ("mamba_ssm", "mamba_ssm.utils", "mamba_ssm.utils.determinism")
_mods = dict(zip(_names, (types.ModuleType(n) for n in _names), strict=True))
_mods["mamba_ssm.utils.determinism"].autotune_configs = autotune_configs
for _name, _mod in _mods.items():
    sys.modules.setdefault(_name, _mod)


class _NoDeviceGuard:  # the entries' `with torch.cuda.device(x.device.index)`: index None on CPU, a TypeError there
    def __init__(self, device):
        self.device = device

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if not torch.cuda.is_available():  # CPU interpreter only; on a GPU the real guard runs
    torch.cuda.device = _NoDeviceGuard

ENTRY = "swiglu"
AUDIT_SHAPE = (3, 5, 200)


def make_inputs(case):
    return (case.randn(*case.shape),)


def reference(xy):
    x, y = xy.float().chunk(2, dim=-1)
    return (F.silu(x) * y).to(xy.dtype)
