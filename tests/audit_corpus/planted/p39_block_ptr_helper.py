"""Attention-style inner loop in a helper kernel: it gets block pointers from its caller and loads them without
boundary_check, so a sequence length that is not a multiple of BLOCK_N reads past the end."""

import torch
import triton
import triton.language as tl


@triton.jit
def _inner(acc, q, K_block_ptr, V_block_ptr, seq_len, BLOCK_N: tl.constexpr):
    for _ in range(0, seq_len, BLOCK_N):
        k = tl.load(K_block_ptr)  # planted: block_ptr_boundary
        v = tl.load(V_block_ptr)  # planted: block_ptr_boundary
        p = tl.dot(q, k)
        acc = tl.dot(p.to(v.dtype), v, acc)
        K_block_ptr = tl.advance(K_block_ptr, (0, BLOCK_N))
        V_block_ptr = tl.advance(V_block_ptr, (BLOCK_N, 0))
    return acc


@triton.jit
def qkv_kernel(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, stride_s, stride_d, D: tl.constexpr, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    q_bp = tl.make_block_ptr(base=q_ptr, shape=(seq_len, D), strides=(stride_s, stride_d),
                             offsets=(pid * BLOCK_M, 0), block_shape=(BLOCK_M, D), order=(1, 0))
    k_bp = tl.make_block_ptr(base=k_ptr, shape=(D, seq_len), strides=(stride_d, stride_s), offsets=(0, 0),
                             block_shape=(D, BLOCK_N), order=(0, 1))
    v_bp = tl.make_block_ptr(base=v_ptr, shape=(seq_len, D), strides=(stride_s, stride_d), offsets=(0, 0),
                             block_shape=(BLOCK_N, D), order=(1, 0))
    o_bp = tl.make_block_ptr(base=o_ptr, shape=(seq_len, D), strides=(stride_s, stride_d),
                             offsets=(pid * BLOCK_M, 0), block_shape=(BLOCK_M, D), order=(1, 0))
    q = tl.load(q_bp, boundary_check=(0, 1), padding_option="zero")
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    acc = _inner(acc, q, k_bp, v_bp, seq_len, BLOCK_N)
    tl.store(o_bp, acc.to(o_ptr.dtype.element_ty), boundary_check=(0, 1))


def qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    S, D = q.shape
    o = torch.empty_like(q)
    qkv_kernel[(triton.cdiv(S, 64),)](q, k, v, o, S, q.stride(0), q.stride(1), D=D, BLOCK_M=64, BLOCK_N=64)
    return o
