# Audit harness for tests/audit_public_corpus/flag_gems/embedding.py: embedding(weight, indices, padding_idx=-1,
# scale_grad_by_freq=False, sparse=False) -> weight[indices] (aten::embedding's forward; padding_idx only matters to
# the backward, and -1 is aten's "none"). The file imports flag_gems.runtime.torch_device_fn, flag_gems.utils.libentry
# and triton_lang_extension; flag_gems' runtime probes for a GPU on import, so: stand-ins (libentry: the kernel as
# is; tle: its definitions; torch_device_fn.device: no device switch).
import contextlib
import sys
import types

import torch
import triton
import triton.language as tl


@triton.jit
def program_id(axis: int) -> tl.tensor:  # flag_gems/utils/triton_lang_extension.py
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def num_programs(axis: int) -> tl.tensor:
    return tl.num_programs(axis).to(tl.int64)


_names = ("flag_gems", "flag_gems.runtime", "flag_gems.utils", "flag_gems.utils.triton_lang_extension")
# One worker audits several files: the flag_gems harnesses share these stand-ins (each adds what its file needs);
# a real flag_gems, where installed, is left alone.
_mods = {n: sys.modules.setdefault(n, types.ModuleType(n)) for n in _names}
if getattr(_mods["flag_gems"], "__file__", None) is None:
    _rt, _ut = _mods["flag_gems.runtime"], _mods["flag_gems.utils"]
    _tle = _mods["flag_gems.utils.triton_lang_extension"]
    _rt.torch_device_fn = types.SimpleNamespace(device=lambda dev: contextlib.nullcontext())
    _ut.libentry = lambda: (lambda fn: fn)
    _tle.program_id, _tle.num_programs = program_id, num_programs
    _ut.triton_lang_extension = _tle
    _mods["flag_gems"].runtime, _mods["flag_gems"].utils = _rt, _ut

ENTRY = "embedding"
AUDIT_SHAPE = (4, 6, 100)  # indices [4, 6] into a [50, 100] table


def make_inputs(case):
    b, t, n = case.shape
    return (case.randn(50, n), case.randint(0, 50, (b, t)))


def reference(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    return torch.nn.functional.embedding(indices, weight)
