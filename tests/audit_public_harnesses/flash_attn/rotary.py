# Audit harness for tests/audit_public_corpus/flash_attn/rotary.py: apply_rotary(x, cos, sin, seqlen_offsets=0,
# cu_seqlens=None, max_seqlen=None, interleaved=False, inplace=False, conjugate=False) -> y (batch, seqlen, nheads,
# headdim) as its docstring gives it: cos and sin (seqlen_ro, rotary_dim / 2), rotary_dim <= headdim; the first
# rotary_dim features rotated GPT-NeoX style (halves x0 = x[..., :rd/2], x1 = x[..., rd/2:rd]: x0 cos - x1 sin,
# x0 sin + x1 cos, with the position's cos/sin), the rest copied. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "apply_rotary"
AUDIT_SHAPE = (2, 6, 3, 20)  # batch 2, seqlen 6, 3 heads of dim 20, rotary_dim 16


def make_inputs(case):
    b, s, h, d = case.shape
    half = max(1, (d * 4 // 5) // 2)
    pos = torch.arange(s, dtype=torch.float32)[:, None] * torch.rand(half, generator=torch.Generator().manual_seed(
        case.seed))[None, :]
    return (case.randn(b, s, h, d), pos.cos().to(case.device, case.dtype), pos.sin().to(case.device, case.dtype))


def reference(x, cos, sin, seqlen_offsets=0, cu_seqlens=None, max_seqlen=None, interleaved=False, inplace=False,
              conjugate=False):
    half = cos.shape[1]
    s = x.shape[1]
    c = cos[seqlen_offsets:seqlen_offsets + s, None, :].float()
    n = sin[seqlen_offsets:seqlen_offsets + s, None, :].float()
    n = -n if conjugate else n
    xf = x.float()
    x0, x1 = xf[..., :half], xf[..., half:2 * half]
    out = torch.cat([x0 * c - x1 * n, x0 * n + x1 * c, xf[..., 2 * half:]], dim=-1)
    return out.to(x.dtype)
