# Audit harness for tests/audit_public_corpus/comfy_kitchen/rope.py: apply_rope(xq, xk, freqs_cis) -> (xq_out, xk_out),
# interleaved RoPE (pair k = elements 2k, 2k + 1) as a 2 x 2 rotation matrix per pair: out[2k + i] = freqs[k, i, 0] *
# x[2k] + freqs[k, i, 1] * x[2k + 1], in freqs_cis' dtype, cast to x's (the Triton backend of comfy_kitchen.apply_rope;
# the eager backend, backends/eager/rope.py apply_rope1, is the reference below). Called as ComfyUI's Flux attention
# calls it (comfy/ldm/flux/math.py: `q, k = apply_rope(q, k, pe)` after the per-head QK RMSNorm): q and k
# [B, heads, tokens, head_dim] (the norm's outputs: contiguous), the model dtype (fp16 here: bf16 runs the same math;
# the CPU interpreter is exact for fp16), pe = EmbedND's rotation matrices [B, 1, tokens, head_dim / 2, 2, 2] float32.
# Flux: 24 heads of 128; small token counts here. The file imports comfy_kitchen._rope_utils (check_rope_inplace, used
# only by the in-place variants): a stand-in with a function that checks nothing (the entry never calls it).
import sys
import types

import torch

for _n in ("comfy_kitchen", "comfy_kitchen._rope_utils"):
    sys.modules.setdefault(_n, types.ModuleType(_n))
if not hasattr(sys.modules["comfy_kitchen._rope_utils"], "check_rope_inplace"):
    sys.modules["comfy_kitchen._rope_utils"].check_rope_inplace = lambda *xs, readonly=(): None

ENTRY = "apply_rope"
AUDIT_SHAPE = (1, 3, 40, 128)  # batch, heads, tokens, head_dim
TOLERANCES = {"float16": (2e-3, 2e-3)}  # fp32 rotation, one fp16 rounding of the output


def _freqs(case, b, n, d):
    # EmbedND/rope(): angle = pos * theta ** (-2k / d); rows [[cos, -sin], [sin, cos]]
    pos = torch.arange(n, dtype=torch.float64)[:, None] + case.randint(0, 64, (b, 1, 1)).double().cpu()
    ang = pos * 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # [b, n, d / 2]
    c, s = torch.cos(ang), torch.sin(ang)
    out = torch.stack([c, -s, s, c], dim=-1).reshape(b, 1, n, d // 2, 2, 2).float()
    return out.to(case.device)


def make_inputs(case):
    b, h, n, d = case.shape
    xq = case.randn(b, h, n, d, dtype=torch.float16)
    xk = case.randn(b, h, n, d, dtype=torch.float16)
    return (xq, xk, _freqs(case, b, n, d))


def _rope1(x, freqs_cis):  # backends/eager/rope.py apply_rope1, in float64
    if x.shape[-1] % 2 or freqs_cis.shape[-3:] != (x.shape[-1] // 2, 2, 2):
        raise ValueError("freqs_cis must be [..., head_dim / 2, 2, 2]")
    f = freqs_cis.double()
    if x.ndim > 2 and f.ndim > 2 and x.shape[2] != 1 and f.shape[2] > x.shape[2]:
        f = f[:, :, : x.shape[2]]  # trim_rope_freqs
    x_ = x.double().reshape(*x.shape[:-1], -1, 1, 2)
    out = f[..., 0] * x_[..., 0] + f[..., 1] * x_[..., 1]
    return out.reshape(*x.shape).to(x.dtype)


def reference(xq, xk, freqs_cis):
    return _rope1(xq, freqs_cis), _rope1(xk, freqs_cis)
