# Audit harness for tests/audit_public_corpus/fused_turboquant/triton_attention.py (fused-turboquant's
# fused_turboquant/kernels/triton_attention.py): fused_qk_scores_rht(q_rotated, key_indices, key_norms, centroids,
# scale, bits) -> float32 [B, Q_H, q_len, kv_len]: attention scores straight from TurboQuant-compressed keys, score =
# norm[s] * sum_d q_rot[d] * centroids[idx[s, d]] * scale, the indices unpacked in the kernel (3-bit: 8 indices in 3
# bytes, LSB first; 4-bit: nibbles; 2-bit: 4 per byte). Called as the package's HF integration calls it at decode
# (hf/fused_cache.py, fused_forward with q_len == 1; the vLLM plugin's _forward_decode the same): q_rot =
# randomized_hadamard(query_states.float()) viewed [B, Q_H, 1, D] (float32), the cache's packed_indices [B, KV_H, kv_len,
# D * 3 / 8] uint8 (core/packing.pack_3bit), norms [B, KV_H, kv_len] float32, the quantizer's Lloyd-Max levels (8
# float32 centroids for 3 bits, sorted, symmetric), scale 1 / sqrt(D), bits 3 (the package's default). Qwen-style GQA:
# 8 query heads over 2 KV heads, head_dim 128, 2 sequences with 100 cached tokens. The reference unpacks with the
# package's pack_3bit layout and computes q . (centroids[idx] * norm) in float64. The file imports only torch and
# triton: no stand-in.
import torch

ENTRY = "fused_qk_scores_rht"
AUDIT_SHAPE = (2, 8, 2, 100, 128)  # batch, query heads, KV heads, cached tokens, head_dim
TOLERANCES = {"float32": (1e-5, 1e-5)}  # float32 products over head_dim
BITS = 3
LEVELS = (-2.152, -1.344, -0.756, -0.245, 0.245, 0.756, 1.344, 2.152)  # Lloyd-Max for a unit Gaussian, 3 bits


def _pack_3bit(idx):  # core/packing.pack_3bit: 8 indices per 3 bytes, index j at bits 3j..3j+2
    flat = idx.reshape(*idx.shape[:-1], -1, 8).to(torch.int32)
    v = [flat[..., i] for i in range(8)]
    b0 = (v[0] & 7) | ((v[1] & 7) << 3) | ((v[2] & 3) << 6)
    b1 = ((v[2] >> 2) & 1) | ((v[3] & 7) << 1) | ((v[4] & 7) << 4) | ((v[5] & 1) << 7)
    b2 = ((v[5] >> 1) & 3) | ((v[6] & 7) << 2) | ((v[7] & 7) << 5)
    return torch.stack([b0, b1, b2], dim=-1).to(torch.uint8).reshape(*idx.shape[:-1], idx.shape[-1] * 3 // 8)


def _unpack_3bit(packed, d):
    g = packed.reshape(*packed.shape[:-1], -1, 3).to(torch.int32)
    b0, b1, b2 = g[..., 0], g[..., 1], g[..., 2]
    v = [b0 & 7, (b0 >> 3) & 7, ((b0 >> 6) | (b1 << 2)) & 7, (b1 >> 1) & 7, (b1 >> 4) & 7,
         ((b1 >> 7) | (b2 << 1)) & 7, (b2 >> 2) & 7, (b2 >> 5) & 7]
    return torch.stack(v, dim=-1).reshape(*packed.shape[:-1], d)


def make_inputs(case):
    b, hq, hk, s, d = case.shape
    if d % 8:
        raise ValueError("pack_3bit needs head_dim % 8 == 0")
    q = case.randn(b, hq, 1, d, dtype=torch.float32)
    idx = case.randint(0, 1 << BITS, (b, hk, s, d))
    norms = case.rand(b, hk, s, low=0.5, high=2.0, dtype=torch.float32)
    cents = torch.tensor(LEVELS, dtype=torch.float32, device=q.device)
    return (q, _pack_3bit(idx).to(q.device), norms, cents, 1.0 / d ** 0.5, BITS)


def reference(q_rotated, key_indices, key_norms, centroids, scale, bits=3):
    if bits != 3:
        raise ValueError("this reference unpacks the 3-bit layout")
    b, hq, ql, d = q_rotated.shape
    hk = key_indices.shape[1]
    keys = centroids.double()[_unpack_3bit(key_indices, d).long()] * key_norms.double()[..., None]  # [B, KV_H, S, D]
    keys = keys.repeat_interleave(hq // hk, dim=1)
    return (torch.einsum("bhqd,bhsd->bhqs", q_rotated.double(), keys) * scale).float()
