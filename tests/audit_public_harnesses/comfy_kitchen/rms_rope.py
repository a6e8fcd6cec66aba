# Audit harness for tests/audit_public_corpus/comfy_kitchen/rms_rope.py: rms_rope(q, k, freqs_cis, q_scale,
# k_scale=None, epsilon=1e-6) -> (q_out, k_out): per-head RMSNorm with a weight (materialized in q's dtype), then
# interleaved RoPE (pair k = elements 2k, 2k + 1) by the 2 x 2 rotation matrices of freqs_cis (the Triton backend of
# comfy_kitchen.rms_rope; the eager backend, backends/eager/rope.py _rms_rope1, is the reference below). Called as a
# ComfyUI video DiT's fused QK path calls it: `q = attn.to_q(hidden).unflatten(-1, (heads, -1))` (k likewise), then
# `ck.rms_rope(q, k, pe, norm_q.weight.to(q.dtype), norm_k.weight.to(q.dtype), norm_q.eps)`: q and k [B, tokens,
# heads, head_dim] (BNHD, contiguous), pe [B, tokens, 1, head_dim / 2, 2, 2] float32, weights [head_dim] in the model
# dtype (fp16 here: bf16 runs the same math; the CPU interpreter is exact for fp16), eps 1e-6. The kernel's grid is
# (batch, heads, tokens): the tokens of a video (tens of thousands) are its third axis. The file imports
# comfy_kitchen._rope_utils (check_rope_inplace, detect_rms_rope_bnhd) and comfy_kitchen.backends.eager.rope (the
# partial-rotary fallback, not taken here): stand-ins with the package's detect_rms_rope_bnhd (comfy-kitchen 0.2.40,
# Apache-2.0) unchanged, a check_rope_inplace that checks nothing (only the in-place variants call it) and an empty
# eager module.
import sys
import types

import torch

for _n in ("comfy_kitchen", "comfy_kitchen._rope_utils", "comfy_kitchen.backends", "comfy_kitchen.backends.eager",
           "comfy_kitchen.backends.eager.rope"):
    sys.modules.setdefault(_n, types.ModuleType(_n))
sys.modules["comfy_kitchen.backends.eager"].rope = sys.modules["comfy_kitchen.backends.eager.rope"]


def detect_rms_rope_bnhd(x, freqs_cis, rot_dim=0):  # comfy_kitchen/_rope_utils.py, unchanged
    if x.ndim != 4 or freqs_cis.ndim != 6:
        return None

    x_shape = x.shape
    freqs_shape = freqs_cis.shape
    head_dim = x_shape[3]
    rot = rot_dim if rot_dim else head_dim
    if (
        head_dim == 0
        or head_dim % 2 != 0
        or rot % 2 != 0
        or rot > head_dim
        or freqs_shape[3:] != (rot // 2, 2, 2)
        or freqs_shape[0] not in (1, x_shape[0])
    ):
        return None
    if freqs_shape[1] == 1 and freqs_shape[2] in (1, x_shape[2]):
        return False
    if freqs_shape[1] in (1, x_shape[1]) and freqs_shape[2] == 1:
        return True
    return None


_ru = sys.modules["comfy_kitchen._rope_utils"]
if not hasattr(_ru, "detect_rms_rope_bnhd"):
    _ru.detect_rms_rope_bnhd = detect_rms_rope_bnhd
if not hasattr(_ru, "check_rope_inplace"):
    _ru.check_rope_inplace = lambda *xs, readonly=(): None

ENTRY = "rms_rope"
AUDIT_SHAPE = (1, 40, 3, 128)  # batch, tokens, heads, head_dim
TOLERANCES = {"float16": (2e-3, 2e-3)}  # fp32 norm, one fp16 rounding of the normed value and one of the output


def _freqs(case, b, n, d):
    pos = torch.arange(n, dtype=torch.float64)[:, None] + case.randint(0, 64, (b, 1, 1)).double().cpu()
    ang = pos * 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # [b, n, d / 2]
    c, s = torch.cos(ang), torch.sin(ang)
    return torch.stack([c, -s, s, c], dim=-1).reshape(b, n, 1, d // 2, 2, 2).float().to(case.device)


def make_inputs(case):
    b, n, h, d = case.shape
    q = case.randn(b, n, h, d, dtype=torch.float16)
    k = case.randn(b, n, h, d, dtype=torch.float16)
    wq = (1 + 0.1 * case.randn(d)).to(torch.float16)
    wk = (1 + 0.1 * case.randn(d)).to(torch.float16)
    return (q, k, _freqs(case, b, n, d), wq, wk, 1e-6)


def _rms_rope1(x, freqs_cis, scale, epsilon):  # backends/eager/rope.py _rms_rope1 (interleaved, full rotary)
    if detect_rms_rope_bnhd(x, freqs_cis) is None:
        raise ValueError("RMS-RoPE frequencies are not broadcastable to input")
    xd = x.double()
    xn = (xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + epsilon) * scale.double()).to(x.dtype)
    f = freqs_cis.double()
    x_ = xn.double().reshape(*x.shape[:-1], -1, 1, 2)
    out = f[..., 0] * x_[..., 0] + f[..., 1] * x_[..., 1]
    return out.reshape(*x.shape).to(x.dtype)


def reference(q, k, freqs_cis, q_scale, k_scale=None, epsilon=1e-6):
    return _rms_rope1(q, freqs_cis, q_scale, epsilon), _rms_rope1(k, freqs_cis, q_scale if k_scale is None else k_scale,
                                                                  epsilon)
