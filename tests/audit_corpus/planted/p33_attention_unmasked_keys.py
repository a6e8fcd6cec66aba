"""Attention whose out-of-range keys load 0.0 and stay in the row max and the softmax sum."""

import torch
import triton
import triton.language as tl


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, stride_s, S, sm_scale, HEAD_DIM: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0).to(tl.int64)
    bh = tl.program_id(1).to(tl.int64)
    base = bh * S * stride_s
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], mask=offs_m[:, None] < S, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start_n in range(0, S, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(k_ptr + base + cols[None, :] * stride_s + offs_d[:, None],  # planted: masked_load_other
                    mask=cols[None, :] < S, other=0.0)
        v = tl.load(v_ptr + base + cols[:, None] * stride_s + offs_d[None, :], mask=cols[:, None] < S, other=0.0)
        qk = tl.dot(q, k) * sm_scale
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)  # planted: masked_lanes_in_reduction
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    tl.store(o_ptr + base + offs_m[:, None] * stride_s + offs_d[None, :], (acc / l_i[:, None]).to(o_ptr.dtype.element_ty),
             mask=offs_m[:, None] < S)


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    grid = (triton.cdiv(S, 64), B * H)
    attention_kernel[grid](q, k, v, o, q.stride(2), S, D ** -0.5, HEAD_DIM=D, BLOCK_M=64, BLOCK_N=64)
    return o
