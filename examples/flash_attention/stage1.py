"""Stage 1: one program per (query block, batch*head); online softmax over every key block, masks everywhere.

Assumes D (head_dim) is a power of 2 in [16, 256]: tl.dot needs tile sides >= 16 and tl.arange powers of 2.
"""

import math
import os

import torch
import triton
import triton.language as tl

# The CPU interpreter's tl.dot multiplies bf16 as raw bit patterns; under TRITON_INTERPRET=1 tiles go through
# fp32.
_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


@triton.jit
def attention_fwd_kernel(
    q_ptr,
    k_ptr,
    v_ptr,
    o_ptr,
    stride_qb,
    stride_qh,
    stride_qs,
    stride_qd,
    stride_kb,
    stride_kh,
    stride_ks,
    stride_kd,
    stride_vb,
    stride_vh,
    stride_vs,
    stride_vd,
    stride_ob,
    stride_oh,
    stride_os,
    stride_od,
    H,
    S,
    sm_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    UPCAST_DOT: tl.constexpr,
):
    start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    off_b = (off_bh // H).to(tl.int64)
    off_h = (off_bh % H).to(tl.int64)
    q_ptr += off_b * stride_qb + off_h * stride_qh
    k_ptr += off_b * stride_kb + off_h * stride_kh
    v_ptr += off_b * stride_vb + off_h * stride_vh
    o_ptr += off_b * stride_ob + off_h * stride_oh
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(
        q_ptr + offs_m[:, None] * stride_qs + offs_d[None, :] * stride_qd, mask=offs_m[:, None] < S, other=0.0
    )
    if UPCAST_DOT:
        q = q.to(tl.float32)
    # Online softmax: running row max m_i and row sum l_i; acc is rescaled by exp(m_old - m_new) whenever the
    # max grows, so the S x S score matrix is never stored.
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    for start_n in range(0, S, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(
            k_ptr + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd, mask=cols[None, :] < S, other=0.0
        )  # loaded as K^T (HEAD_DIM, BLOCK_N)
        v = tl.load(
            v_ptr + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd, mask=cols[:, None] < S, other=0.0
        )
        if UPCAST_DOT:
            k = k.to(tl.float32)
            v = v.to(tl.float32)
        qk = tl.dot(q, k) * sm_scale
        # Causal and out-of-range keys get -inf. Block 0 always holds key 0 <= every query, so m_i is finite
        # after the first step and exp(-inf - m) = 0 never meets -inf - (-inf).
        keep = (offs_m[:, None] >= cols[None, :]) & (cols[None, :] < S)
        qk = tl.where(keep, qk, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(qk, axis=1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(
        o_ptr + offs_m[:, None] * stride_os + offs_d[None, :] * stride_od,
        acc.to(o_ptr.dtype.element_ty),
        mask=offs_m[:, None] < S,
    )


def check_inputs(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    """Refuse what the kernels do not handle, with the reason."""
    if q.dim() != 4 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError(
            f"q, k, v must share one (B, H, S, D) shape, got {tuple(q.shape)}, {tuple(k.shape)}, "
            f"{tuple(v.shape)}"
        )
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"q, k, v dtypes differ: {q.dtype}, {k.dtype}, {v.dtype}")
    D = q.shape[-1]
    if D < 16 or D > 256 or D & (D - 1):
        raise ValueError(
            f"head_dim D={D} is not supported: it must be a power of 2 in [16, 256] (tl.dot tiles)"
        )


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Causal attention forward, softmax scale 1/sqrt(D)."""
    check_inputs(q, k, v)
    B, H, S, D = q.shape
    o = torch.empty_like(q)
    if o.numel() == 0:
        return o
    BLOCK_M, BLOCK_N = 64, 64
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    attention_fwd_kernel[grid](
        q,
        k,
        v,
        o,
        *q.stride(),
        *k.stride(),
        *v.stride(),
        *o.stride(),
        H,
        S,
        1.0 / math.sqrt(D),
        HEAD_DIM=D,
        BLOCK_M=BLOCK_M,
        BLOCK_N=BLOCK_N,
        UPCAST_DOT=_INTERPRET and q.dtype == torch.bfloat16,
        num_warps=4,
    )
    return o
