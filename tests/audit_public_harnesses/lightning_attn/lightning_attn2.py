# Audit harness for tests/audit_public_corpus/lightning_attn/lightning_attn2.py: lightning_attn2(q, k, v, s) =
# LightningAttention2.apply -> o [b, h, n, e], causal linear attention with a per-head exponential decay:
# o[i] = sum_{j <= i} exp(-s_h * (i - j)) * (q[i] . k[j]) * v[j], q and k [b, h, n, d], v [b, h, n, e], s [h, 1, 1]
# the float32 ALiBi-style slopes (lightning_attn.utils._build_slope_tensor). Called as the package's
# lightning_attn_func calls it for d <= 128: q and k as given, v zero-padded in its last dim to a power of 2; its
# autograd backward (dq, dk, dv; no gradient for the fixed slopes) is what training uses. The file imports only torch
# and triton: no stand-in.
import math

import torch

ENTRY = "lightning_attn2"
AUDIT_SHAPE = (2, 3, 80, 16)  # batch, heads, sequence length (two 64-token blocks), head dim (v's dim the same)


def _slopes(h):  # ALiBi slopes as _build_slope_tensor gives them (the power-of-2 part and the interleaved rest)
    def pow2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(h).is_integer():
        return pow2(h)
    c = 2 ** math.floor(math.log2(h))
    return pow2(c) + _slopes(2 * c)[0::2][: h - c]


def make_inputs(case):
    b, h, n, d = case.shape
    e = 1 << max(d - 1, 0).bit_length()  # lightning_attn_func pads v's feature dim to a power of 2
    v = torch.nn.functional.pad(case.randn(b, h, n, d), (0, e - d))
    s = torch.tensor(_slopes(max(h, 1)), dtype=torch.float32)[:h].reshape(h, 1, 1).to(case.device)
    return (case.randn(b, h, n, d), case.randn(b, h, n, d), v, s)


def reference(q, k, v, s):
    n = q.shape[2]
    i = torch.arange(n, device=q.device)
    dist = (i[:, None] - i[None, :]).to(torch.float64)
    decay = torch.exp(-s.double() * dist.clamp(min=0)) * (dist >= 0)  # [h, n, n]
    scores = (q.double() @ k.double().transpose(-1, -2)) * decay
    return (scores @ v.double()).to(q.dtype)
