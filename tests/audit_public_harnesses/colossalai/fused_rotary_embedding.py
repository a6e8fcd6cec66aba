# Audit harness for tests/audit_public_corpus/colossalai/fused_rotary_embedding.py: fused_rotary_embedding(q, k, cos,
# sin, lengths), in place on q and k [total_tokens, head_num, head_dim] (unpadded sequences of the given lengths,
# concatenated): rotate-half RoPE at each token's position within its sequence, with the first head_dim // 2 columns
# of cos and sin [max_position_len, head_dim] (the kernel reads those): x0' = x0 cos - x1 sin, x1' = x0 sin + x1 cos.
# The file imports only torch and triton: no stand-in.
import torch

ENTRY = "fused_rotary_embedding"
AUDIT_SHAPE = (20, 4, 16)  # 20 tokens in 3 sequences, 4 heads, head_dim 16


def make_inputs(case):
    t, h, d = case.shape
    a = t // 3
    lengths = torch.tensor([a, a, t - 2 * a], dtype=torch.int32, device=case.device)
    pos = torch.arange(max(t, 1), dtype=torch.float32, device=case.device)[:, None]
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32, device=case.device) / max(d, 1)))
    ang = torch.cat([pos * inv, pos * inv], dim=1)
    return (case.randn(t, h, d), case.randn(t, h, d), ang.cos().to(case.dtype), ang.sin().to(case.dtype), lengths)


def reference(q, k, cos, sin, lengths):
    d = q.shape[-1]
    if d % 2:
        raise ValueError("rotate-half RoPE needs an even head_dim")
    pos = torch.cat([torch.arange(int(n)) for n in lengths.tolist()]).to(q.device)
    if pos.numel() != q.shape[0]:
        raise ValueError("lengths must sum to total_tokens")
    c, s = cos[pos, : d // 2][:, None, :], sin[pos, : d // 2][:, None, :]
    for x in (q, k):
        x0, x1 = x[..., : d // 2].clone(), x[..., d // 2:].clone()
        x[..., : d // 2] = x0 * c - x1 * s
        x[..., d // 2:] = x0 * s + x1 * c
