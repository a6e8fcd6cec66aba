"""Stage 3: the Triton tutorial 06 structure for Hopper: an unmasked loop over the key blocks left of the
diagonal, then a masked pass over the diagonal block only; 128-row query tiles; the longest rows launched
first.

Forward only (no backward kernel). Pointer loads, not TMA: 2-D descriptors over (B*H*S, D) would let a partial
tail tile read and write into the next head whenever S is not a multiple of BLOCK_M.

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
LOG2E = 1.4426950408889634


def _configs() -> list[triton.Config]:
    if _INTERPRET:
        return [triton.Config({"BLOCK_M": 64, "BLOCK_N": 32}, num_warps=4)]
    # BLOCK_M must be a multiple of BLOCK_N: the diagonal pass covers exactly one BLOCK_M of keys.
    # 128-row tiles with 8 warps (two warpgroups of wgmma) are the tutorial's best on H100 for D=128.
    return [
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_stages=4, num_warps=8),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_stages=3, num_warps=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_stages=3, num_warps=4),
    ]


@triton.jit
def _attention_inner(
    acc,
    l_i,
    m_i,
    q,
    k_ptr,
    v_ptr,
    stride_ks,
    stride_kd,
    stride_vs,
    stride_vd,
    offs_m,
    offs_n,
    offs_d,
    lo,
    hi,
    S,
    qk_scale,
    BLOCK_N: tl.constexpr,
    MASKED: tl.constexpr,
    UPCAST_DOT: tl.constexpr,
):
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        cols = start_n + offs_n
        k_ptrs = k_ptr + cols[None, :] * stride_ks + offs_d[:, None] * stride_kd
        v_ptrs = v_ptr + cols[:, None] * stride_vs + offs_d[None, :] * stride_vd
        if MASKED:
            k = tl.load(k_ptrs, mask=cols[None, :] < S, other=0.0)
            v = tl.load(v_ptrs, mask=cols[:, None] < S, other=0.0)
        else:  # left of the diagonal every key exists and is visible: no masks, no selects
            k = tl.load(k_ptrs)
            v = tl.load(v_ptrs)
        if UPCAST_DOT:
            k = k.to(tl.float32)
            v = v.to(tl.float32)
        qk = tl.dot(q, k)
        if MASKED:
            keep = (offs_m[:, None] >= cols[None, :]) & (cols[None, :] < S)
            qk = tl.where(keep, qk * qk_scale, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, axis=1))
            qk = qk - m_new[:, None]
        else:
            # Scale after the max (max(c * x) = c * max(x) for c > 0): the scale and the subtraction fuse into
            # one FMA per score.
            m_new = tl.maximum(m_i, tl.max(qk, axis=1) * qk_scale)
            qk = qk * qk_scale - m_new[:, None]
        p = tl.exp2(qk)
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    return acc, l_i, m_i


@triton.autotune(configs=_configs(), key=["S", "HEAD_DIM"])
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
    qk_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    UPCAST_DOT: tl.constexpr,
):
    tl.static_assert(BLOCK_M % BLOCK_N == 0)
    # Last query blocks first: they have the most key blocks, and starting them early stops them from being
    # the
    # tail of the launch while the short first rows leave SMs idle.
    start_m = tl.num_programs(0) - 1 - tl.program_id(0)
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
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, HEAD_DIM), dtype=tl.float32)
    # Off-diagonal: keys [0, start_m * BLOCK_M) are all < S and all visible to every query row of the block.
    acc, l_i, m_i = _attention_inner(
        acc,
        l_i,
        m_i,
        q,
        k_ptr,
        v_ptr,
        stride_ks,
        stride_kd,
        stride_vs,
        stride_vd,
        offs_m,
        offs_n,
        offs_d,
        0,
        start_m * BLOCK_M,
        S,
        qk_scale,
        BLOCK_N=BLOCK_N,
        MASKED=False,
        UPCAST_DOT=UPCAST_DOT,
    )
    # Diagonal: the one BLOCK_M-wide band where the causal mask and the end of the sequence cut in. Its first
    # key block holds key start_m * BLOCK_M <= every query row, so m_i is finite before any fully masked row.
    acc, l_i, m_i = _attention_inner(
        acc,
        l_i,
        m_i,
        q,
        k_ptr,
        v_ptr,
        stride_ks,
        stride_kd,
        stride_vs,
        stride_vd,
        offs_m,
        offs_n,
        offs_d,
        start_m * BLOCK_M,
        tl.minimum((start_m + 1) * BLOCK_M, S),
        S,
        qk_scale,
        BLOCK_N=BLOCK_N,
        MASKED=True,
        UPCAST_DOT=UPCAST_DOT,
    )
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

    def grid(meta: dict) -> tuple[int, int]:
        return (triton.cdiv(S, meta["BLOCK_M"]), B * H)

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
        LOG2E / math.sqrt(D),
        HEAD_DIM=D,
        UPCAST_DOT=_INTERPRET and q.dtype == torch.bfloat16,
    )
    return o
