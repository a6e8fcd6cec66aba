# Audit harness for tests/audit_public_corpus/flag_gems/layernorm.py: layer_norm(input, normalized_shape, weight=None,
# bias=None, eps=1e-5) -> (y, mean, rstd): torch.nn.functional.layer_norm over the trailing normalized_shape dims, and
# each row's mean and 1/std (in the input's dtype).
# The file imports flag_gems.runtime (torch_device_fn, get_tuned_config), flag_gems.utils.libentry and
# triton_lang_extension; flag_gems' runtime probes for a GPU on import, so: stand-ins (libentry: the kernel as is,
# minus its launch cache; tle.program_id: its definition; get_tuned_config: the nvidia tune_configs.yaml entries; torch_device_fn.device: no device switch).
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


_W = (4, 8, 16)
_TUNED = {
    "layer_norm_persistent": [triton.Config({}, num_warps=w) for w in _W],
    "layer_norm_loop": [triton.Config({"TILE_N": t}, num_warps=w) for t in (1024, 2048) for w in _W],
    "layer_norm_backward": [triton.Config({"BLOCK_ROW_SIZE": r, "BLOCK_COL_SIZE": 2048}, num_warps=w)
                            for r in (1, 2, 4, 8) for w in _W],
    "weight_bias_backward": [triton.Config({"BLOCK_ROW_SIZE": 128, "BLOCK_COL_SIZE": c}, num_warps=w)
                             for c in (1, 2, 4, 8) for w in _W],
}
_names = ("flag_gems", "flag_gems.runtime", "flag_gems.utils", "flag_gems.utils.triton_lang_extension")
# One worker audits several files: the flag_gems harnesses share these stand-ins (each adds what its file needs);
# a real flag_gems, where installed, is left alone.
_mods = {n: sys.modules.setdefault(n, types.ModuleType(n)) for n in _names}
if getattr(_mods["flag_gems"], "__file__", None) is None:
    _rt, _ut = _mods["flag_gems.runtime"], _mods["flag_gems.utils"]
    _tle = _mods["flag_gems.utils.triton_lang_extension"]
    _rt.torch_device_fn = types.SimpleNamespace(device=lambda dev: contextlib.nullcontext())
    _rt._tuned = {**getattr(_rt, "_tuned", {}), **_TUNED}
    _rt.get_tuned_config = lambda op: _rt._tuned[op]
    _ut.libentry = lambda: (lambda fn: fn)
    _tle.program_id, _tle.num_programs = program_id, num_programs
    _ut.triton_lang_extension = _tle
    _mods["flag_gems"].runtime, _mods["flag_gems"].utils = _rt, _ut

ENTRY = "layer_norm"
AUDIT_SHAPE = (3, 5, 200)


def make_inputs(case):
    n = case.shape[-1]
    return (case.randn(*case.shape), [n], case.randn(n), case.randn(n), 1e-5)


def reference(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    dims = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    x = input.float()
    mean = x.mean(dims, keepdim=True)
    rstd = torch.rsqrt(x.var(dims, unbiased=False, keepdim=True) + eps)
    y = torch.nn.functional.layer_norm(x, tuple(normalized_shape), None if weight is None else weight.float(),
                                       None if bias is None else bias.float(), eps)
    return y.to(input.dtype), mean.reshape(-1).to(input.dtype), rstd.reshape(-1).to(input.dtype)
