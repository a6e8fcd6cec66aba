# Audit harness for tests/audit_public_corpus/fasterkernels/triton_fa2.py (fasterkernels' fskernels/triton/
# triton_fa2.py): flash_attention_2_fwd(q, k, v, sm_scale=None) -> softmax(q k^T / sqrt(d)) v, non-causal, [batch,
# heads, seq, head_dim] in and out (q's dtype), one program per 128 query rows and (batch, head), BLOCK_M = BLOCK_N =
# 128 fixed (the autotuner is commented out). Called as the package's benchmark and README call it: q, k, v [B, H, S, D]
# fp16 contiguous, the same heads for q and k; a prompt of 200 tokens (a ragged last block), 4 heads of Llama's
# head_dim 128. The reference is the attention in float64. The file imports only torch and triton: no stand-in.
import math

import torch

ENTRY = "flash_attention_2_fwd"
AUDIT_SHAPE = (1, 4, 200, 128)  # batch, heads, seq, head_dim
TOLERANCES = {"float16": (2e-3, 2e-3)}  # fp16 P @ V with fp32 accumulation


def make_inputs(case):
    b, h, s, d = case.shape
    return tuple(case.randn(b, h, s, d, dtype=torch.float16) for _ in range(3))


def reference(q, k, v, sm_scale=None):
    if q.dim() != 4 or k.shape != v.shape or q.shape[:2] != k.shape[:2] or q.shape[-1] != k.shape[-1]:
        raise ValueError("q [B, H, Sq, D], k and v [B, H, Sk, D]")
    scale = sm_scale if sm_scale is not None else 1.0 / math.sqrt(q.shape[-1])
    p = torch.softmax(q.double() @ k.double().transpose(-1, -2) * scale, dim=-1)
    return (p @ v.double()).to(q.dtype)
