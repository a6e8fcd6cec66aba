# Audit harness for tests/audit_public_corpus/comfy_kitchen/adaln.py: adaln(x, scale, shift, eps=1e-6) ->
# layer_norm(x over its last dim, no affine) * (1 + scale) + shift, scale and shift broadcast to x (the Triton backend
# of comfy_kitchen.adaln, which torch.ops.comfy_kitchen.adaln dispatches to for CUDA/XPU tensors when the Triton
# backend is picked; the eager backend, comfy_kitchen/backends/eager/adaln.py, is the reference below). Called as a
# video DiT block's AdaLN modulation calls it (Wan / LTX / HunyuanVideo style, inference in ComfyUI): x the hidden
# states [B, tokens, dim] in the model dtype (fp16 here: bf16 models run the same math; Triton 3.9's CPU interpreter
# is exact for fp16), scale and shift the per-sample modulation [B, 1, dim] (chunks of the timestep projection,
# float32, as the models keep it), eps 1e-6. The file imports comfy_kitchen.backends._modulation
# (adaln_prep_modulation): a stand-in with the package's function (comfy-kitchen 0.2.40, Apache-2.0), unchanged.
import sys
import types

import torch

_names = ("comfy_kitchen", "comfy_kitchen.backends", "comfy_kitchen.backends._modulation")
_mods = {n: sys.modules.setdefault(n, types.ModuleType(n)) for n in _names}


def adaln_prep_modulation(t, x, n, d):  # comfy_kitchen/backends/_modulation.py, unchanged
    if t.shape[-1] == d:
        lead_x = x.shape[:-1]
        lead_t = t.shape[:-1]
        pad = len(lead_x) - len(lead_t)
        if pad >= 0:
            lead_t = (1,) * pad + tuple(lead_t)
            groupable = True
            seen_broadcast = False
            for s_i, x_i in zip(lead_t, lead_x, strict=True):
                if s_i == x_i:
                    if x_i != 1 and seen_broadcast:
                        groupable = False
                        break
                elif s_i == 1:
                    if x_i != 1:
                        seen_broadcast = True
                else:
                    groupable = False
                    break

            if groupable:
                rows = t.numel() // d
                if rows > 0 and n % rows == 0:
                    flat = t.reshape(rows, d)
                    if not flat.is_contiguous():
                        flat = flat.contiguous()
                    return flat, n // rows

    flat = t.expand_as(x).reshape(n, d)
    return (flat if flat.is_contiguous() else flat.contiguous()), 1


if getattr(_mods["comfy_kitchen"], "__file__", None) is None:  # a real comfy_kitchen, where installed, is left alone
    _mods["comfy_kitchen.backends._modulation"].adaln_prep_modulation = adaln_prep_modulation

ENTRY = "adaln"
AUDIT_SHAPE = (2, 40, 1536)  # batch, tokens, dim (Wan 2.1 1.3B: dim 1536)
TOLERANCES = {"float16": (2e-3, 2e-3)}  # fp32 math, one fp16 rounding of the output


def make_inputs(case):
    b, n, d = case.shape
    x = case.randn(b, n, d, dtype=torch.float16)
    scale = case.randn(b, 1, d, dtype=torch.float32) * 0.1
    shift = case.randn(b, 1, d, dtype=torch.float32) * 0.1
    return (x, scale, shift, 1e-6)


def reference(x, scale, shift, eps=1e-6):
    # the eager backend's math in float64, cast to x's dtype (the Triton backend writes an x-like output)
    xn = torch.nn.functional.layer_norm(x.double(), x.shape[-1:], eps=eps)
    return (xn * (1 + scale.double()) + shift.double()).to(x.dtype)
