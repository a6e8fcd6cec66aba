# Audit harness for tests/audit_public_corpus/xformers/rmsnorm_kernels.py: _rms_norm_forward(x, attn_norm_weights,
# eps) -> x / sqrt(mean(x**2, -1) + eps) * w over the last dim of a contiguous x [..., dim] (w None: no weight),
# output in x's dtype. Called as xformers.ops.rms_norm (the RMSNorm module's forward) calls it: x contiguous,
# the weight a contiguous parameter of length dim in x's dtype, eps 1e-6, no gradient. The file imports
# xformers.triton.importing.libdevice_find, not installed here: a stand-in that returns the named function of the first
# libdevice module this Triton has, as the package's docstring says its function does ("a triton-version-friendly way
# to say from triton.language.extra.libdevice import rsqrt"); the package's own function executes a fresh copy of that
# module, whose stubs the worker's interpreter binding does not reach (rsqrt returns None on the CPU), the same stubs
# on a GPU. The entry enters torch.cuda.device(x.device), a no-op under the interpreter.
import importlib
import importlib.util
import sys
import types

import torch


def libdevice_find(name):  # xformers/triton/importing.py: the first of these modules that exists
    for loc in ("triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice", "triton.language.math",
                "triton.language.libdevice"):
        if importlib.util.find_spec(loc):
            return getattr(importlib.import_module(loc), name)
    raise ImportError(f"Could not find a library to import {name}")


_names = ("xformers", "xformers.triton", "xformers.triton.importing")
_mods = dict(zip(_names, (types.ModuleType(n) for n in _names), strict=True))
_mods["xformers.triton.importing"].libdevice_find = libdevice_find
for _name, _mod in _mods.items():
    sys.modules.setdefault(_name, _mod)

ENTRY = "_rms_norm_forward"
AUDIT_SHAPE = (2, 5, 200)  # batch, tokens, model dim


def make_inputs(case):
    *_, dim = case.shape
    return (case.randn(*case.shape), 1.0 + 0.1 * case.randn(dim), 1e-6)


def reference(x, attn_norm_weights, eps):
    xf = x.double()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    if attn_norm_weights is not None:
        y = y * attn_norm_weights.double()
    return y.to(x.dtype)
