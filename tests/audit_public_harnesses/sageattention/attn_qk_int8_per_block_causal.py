# Audit harness for tests/audit_public_corpus/sageattention/attn_qk_int8_per_block_causal.py: forward(q, k, v,
# q_scale, k_scale, tensor_layout="HND", output_dtype=torch.float16) -> o, the causal attention of sageattn (core.py;
# qo_len == kv_len, asserted) on per_block_int8's output: q_int8 [b, h, qo_len, d] with q_scale [b, h,
# ceil(qo_len / 128), 1] (sm_scale * log2(e) folded in), k_int8 [b, h_kv, kv_len, d] with k_scale [b, h_kv,
# ceil(kv_len / 64), 1], v fp16 [b, h_kv, kv_len, d]: o = softmax2(S) @ v with S = (q_int8 * q_scale) (k_int8 *
# k_scale)^T and softmax2 the base-2 softmax over the keys, key j masked for query i < j (P is rounded to fp16 and
# P @ V accumulated in fp16: tolerance 1e-2). head_dim 64 or 128. The file imports only torch and triton: no stand-in.
import torch

ENTRY = "forward"
AUDIT_SHAPE = (1, 2, 100, 64)  # batch 1, 2 heads, qo_len = kv_len = 100 (not a multiple of 64 or 128), head_dim 64
TOLERANCES = {"float32": (1e-2, 1e-2), "float16": (1e-2, 1e-2)}


def make_inputs(case):
    b, h, n, d = case.shape
    q = case.randint(-127, 128, (b, h, n, d), dtype=torch.int8)
    k = case.randint(-127, 128, (b, h, n, d), dtype=torch.int8)
    v = case.randn(b, h, n, d).to(torch.float16)
    qs = 0.002 + 0.004 * case.rand(b, h, (n + 127) // 128, 1)
    ks = 0.002 + 0.004 * case.rand(b, h, (n + 63) // 64, 1)
    return (q, k, v, qs, ks)


def reference(q, k, v, q_scale, k_scale, tensor_layout="HND", output_dtype=torch.float16):
    if tensor_layout != "HND" or q.shape[-1] not in (64, 128):
        raise ValueError("head_dim 64 or 128 (96 has its own file), HND")
    qf = q.float() * q_scale.float().repeat_interleave(128, dim=2)[:, :, : q.shape[2]]
    kf = k.float() * k_scale.float().repeat_interleave(64, dim=2)[:, :, : k.shape[2]]
    g = q.shape[1] // k.shape[1]
    kf, vf = kf.repeat_interleave(g, dim=1), v.float().repeat_interleave(g, dim=1)
    if q.shape[2] != k.shape[2]:
        raise ValueError("causal: qo_len == kv_len")
    s = qf @ kf.transpose(-1, -2) * 0.6931471805599453
    n = q.shape[2]
    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    p = torch.softmax(s, dim=-1)
    return (p @ vf).to(output_dtype)
