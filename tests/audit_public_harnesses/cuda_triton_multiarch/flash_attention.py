# Audit harness for tests/audit_public_corpus/cuda_triton_multiarch/flash_attention.py: flash_attention_triton(Q, K, V)
# -> softmax(Q K^T / sqrt(d)) V for one head: Q, K, V [T, d] fp16, the output [T, d] fp16 (non-causal: the function
# has no causal argument). Called as the package's public multi-head API calls it: attention_api.flash_attention_bhsd
# (q, k, v [B, H, T, d], the layout its README names as KVQuant's, whose GPU backend this package is) casts q, k, v to
# fp16 and, when neither CUDA extension is built (pip install builds neither: they need `make build-fac`), loops over
# batch and heads calling flash_attention_triton(q_half[b, h], k_half[b, h], v_half[b, h]) on [T, d] slices: contiguous
# when q was a contiguous [B, H, T, d] tensor (as here). Llama's head_dim 128 (KVQuant's models) and a 256-token
# prompt; two heads' slices of one [1, 2, 256, 128] tensor are not needed: one head is what one call sees. The file
# imports only torch and triton: no stand-in.
import torch

ENTRY = "flash_attention_triton"
AUDIT_SHAPE = (256, 128)  # T tokens, head_dim
TOLERANCES = {"float16": (1e-2, 1e-2)}  # fp32 scores and accumulation, fp16 output


def make_inputs(case):
    t, d = case.shape
    q, k, v = (case.randn(1, 2, t, d, dtype=torch.float16) for _ in range(3))  # [B, H, T, d]; head 0 is passed
    return (q[0, 0], k[0, 0], v[0, 0])


def reference(Q, K, V):
    if Q.dim() != 2 or K.shape != Q.shape or V.shape != Q.shape:
        raise ValueError("Q, K and V [T, d] of one shape")
    w = torch.softmax(Q.double() @ K.double().T / Q.shape[-1] ** 0.5, dim=-1)
    return (w @ V.double()).to(Q.dtype)
