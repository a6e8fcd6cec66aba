"""Stage 3: 2-D tiles sized per row length, no autotuner, and no autograd node when no gradient is needed.

Each program takes a [ROWS, BLOCK_N] tile (row-strided, as stage 2) of about 4096 elements: 16 per thread over 8
warps, i.e. two 16-byte loads per operand in bf16, and enough programs in flight to cover HBM latency. Short rows
pack several rows per tile, so N = 7 does not leave 1015 of 1024 lanes idle as in stage 2. The tile shape is a pure
function of N (cached), so a call costs one dictionary lookup and one launch: no autotuner dispatch, and under
no_grad (inference) no torch.autograd.Function either. Backward: one kernel writes da and db (as stage 2).
"""

import functools

import torch
import triton
import triton.language as tl

TILE = 4096  # elements per program: 16 per thread at 8 warps


@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, c_ptr, M, N, stride_a, stride_b, stride_c, ROWS: tl.constexpr,
                      BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    a = tl.load(a_ptr + rows[:, None] * stride_a + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + rows[:, None] * stride_b + cols[None, :], mask=mask, other=0.0).to(tl.float32)
    c = a * tl.sigmoid(a) * b
    tl.store(c_ptr + rows[:, None] * stride_c + cols[None, :], c.to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def swiglu_bwd_kernel(dc_ptr, a_ptr, b_ptr, da_ptr, db_ptr, M, N, stride_dc, stride_a, stride_b, stride_da,
                      stride_db, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows < M)[:, None] & (cols < N)[None, :]
    r = rows[:, None]
    c = cols[None, :]
    dc = tl.load(dc_ptr + r * stride_dc + c, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(a_ptr + r * stride_a + c, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + r * stride_b + c, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(a)
    silu = a * s
    tl.store(db_ptr + r * stride_db + c, (dc * silu).to(db_ptr.dtype.element_ty), mask=mask)
    tl.store(da_ptr + r * stride_da + c, (dc * b * (s + silu * (1.0 - s))).to(da_ptr.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=256)
def _tile(N: int) -> tuple[int, int, int]:
    """(ROWS, BLOCK_N, num_warps) for rows of length N: a tile of about TILE elements."""
    block_n = min(triton.next_power_of_2(max(N, 1)), TILE)
    rows = max(1, TILE // block_n)
    return rows, block_n, 8 if rows * block_n >= 2048 else 4


def _rows(t: torch.Tensor, N: int) -> torch.Tensor:
    """(M, N) view with unit column stride; copies only when the last dim is not contiguous."""
    t2 = t.reshape(-1, N)
    return t2 if t2.stride(-1) == 1 else t2.contiguous()


def _forward(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    N = a.shape[-1] if a.dim() else 1
    a2, b2 = _rows(a, N), _rows(b, N)
    M = a2.shape[0]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if M and N:
        rows, block_n, warps = _tile(N)
        swiglu_fwd_kernel[(triton.cdiv(M, rows), triton.cdiv(N, block_n))](
            a2, b2, c, M, N, a2.stride(0), b2.stride(0), c.stride(0), ROWS=rows, BLOCK_N=block_n, num_warps=warps)
    return c.view(a.shape), a2, b2


class SwiGLUFunction(torch.autograd.Function):
    """silu(a) * b with Triton forward and backward kernels."""

    @staticmethod
    def forward(ctx, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        c, a2, b2 = _forward(a, b)
        ctx.save_for_backward(a2, b2)
        ctx.shape = a.shape
        return c

    @staticmethod
    def backward(ctx, dc: torch.Tensor):
        a2, b2 = ctx.saved_tensors
        M, N = a2.shape
        dc2 = _rows(dc, N)
        da = torch.empty((M, N), dtype=a2.dtype, device=a2.device)
        db = torch.empty((M, N), dtype=b2.dtype, device=b2.device)
        if M and N:
            rows, block_n, warps = _tile(N)
            swiglu_bwd_kernel[(triton.cdiv(M, rows), triton.cdiv(N, block_n))](
                dc2, a2, b2, da, db, M, N, dc2.stride(0), a2.stride(0), b2.stride(0), da.stride(0), db.stride(0),
                ROWS=rows, BLOCK_N=block_n, num_warps=warps)
        return da.view(ctx.shape), db.view(ctx.shape)


def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """silu(a) * b, differentiable in a and b."""
    if a.shape != b.shape:
        raise ValueError(f"a and b must have one shape, got {tuple(a.shape)} and {tuple(b.shape)}")
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        return SwiGLUFunction.apply(a, b)
    return _forward(a, b)[0]  # inference: no autograd node, no saved tensors (less host time per call)
