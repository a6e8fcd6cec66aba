"""Rotary position embedding (RoPE) on q and k, Hugging Face layout, forward and backward.

q (B, H, S, D) and k (B, H_kv, S, D) (grouped-query heads: H_kv may be smaller than H), cos and sin (B or 1, S, D)
as HF's rotary embedding returns them. Then, as transformers' `apply_rotary_pos_emb` (unsqueeze_dim=1):
    q_embed = q * cos + rotate_half(q) * sin,   rotate_half(x) = cat(-x[..., D/2:], x[..., :D/2]),
and the same for k. Computed in fp32 (float64 when the validator runs the reference on upcast inputs), returned in
q's and k's dtypes. case.shape is (B, H, H_kv, S, D) with D even. Gradients are compared for q and k (cos and sin
come from position ids and carry none in a model).
"""

import torch

SHAPES = {
    "small": (2, 4, 2, 4, 32),  # cos/sin per batch row; non-contiguous variants run here (first non-edge case)
    "odd": (3, 3, 3, 5, 40),  # H_kv = H; S, H and D/2 = 20 not powers of 2; cos/sin (1, S, D) broadcast
    "edge_empty": (2, 4, 2, 0, 32),
    "edge_single": (1, 1, 1, 1, 2),  # one token, one head, one rotation pair
    "many_heads": (1, 40, 8, 1, 16),  # 40 query heads over 8 kv heads: head blocks that divide both counts
}
# Llama-3-8B attention at 4 x 4096 tokens: 32 query heads, 8 key/value heads, head dim 128.
BENCH_SHAPES = {"B4_H32_S4096_D128": (4, 32, 8, 4096, 128)}
# bfloat16 first: the benchmark times DTYPES[0] by default.
DTYPES = ["bfloat16", "float32"]
GRAD_INPUTS = [0, 1]  # q, k


def make_inputs(case):
    """Standard-normal q and k; cos and sin of HF's default rotary frequencies (base 10000) at positions
    offset + 0..S-1: one offset per sequence, (B, S, D), when B is even; one shared by the batch, (1, S, D) (what HF
    gives for unpadded batches, broadcast over B), when B is odd."""
    B, H, H_kv, S, D = case.shape
    q, k = case.randn(B, H, S, D), case.randn(B, H_kv, S, D)
    offset = case.randint(0, 1000, (B if B % 2 == 0 else 1, 1)).to(torch.float64)
    pos = offset + torch.arange(S, device=case.device, dtype=torch.float64)[None, :]  # (B, S)
    inv_freq = 1.0 / 10000.0 ** (torch.arange(0, D, 2, device=case.device, dtype=torch.float64) / D)
    freqs = pos[:, :, None] * inv_freq[None, None, :]
    emb = torch.cat((freqs, freqs), dim=-1)  # (B, S, D)
    return q, k, emb.cos().to(case.dtype), emb.sin().to(case.dtype)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
    """The PyTorch reference (transformers' apply_rotary_pos_emb), in fp32 (or float64)."""
    acc = torch.promote_types(q.dtype, torch.float32)
    c, s = cos.unsqueeze(1).to(acc), sin.unsqueeze(1).to(acc)
    qf, kf = q.to(acc), k.to(acc)
    return (qf * c + _rotate_half(qf) * s).to(q.dtype), (kf * c + _rotate_half(kf) * s).to(k.dtype)
