"""Stage 2: row-strided tiles, so views of a fused gate/up projection need no copies; forward and backward.

Models with a fused `gate_up_proj` split its (..., 2N) output into a = x[..., :N] and b = x[..., N:]: two views
with row stride 2N. Stage 1 copied them (`.contiguous()`: two extra reads and writes of the whole tensor); here
each program takes one row and walks it in BLOCK_N chunks through its row stride. Backward as in stage 1.
"""

import torch
import triton
import triton.language as tl

BLOCK_N = 1024


@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, c_ptr, N, stride_a, stride_b, stride_c, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        mask = cols < N
        a = tl.load(a_ptr + row * stride_a + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + row * stride_b + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(c_ptr + row * stride_c + cols, (a * tl.sigmoid(a) * b).to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def swiglu_bwd_kernel(dc_ptr, a_ptr, b_ptr, da_ptr, db_ptr, N, stride_dc, stride_a, stride_b, stride_da, stride_db,
                      BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        mask = cols < N
        dc = tl.load(dc_ptr + row * stride_dc + cols, mask=mask, other=0.0).to(tl.float32)
        a = tl.load(a_ptr + row * stride_a + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + row * stride_b + cols, mask=mask, other=0.0).to(tl.float32)
        s = tl.sigmoid(a)
        silu = a * s
        tl.store(db_ptr + row * stride_db + cols, (dc * silu).to(db_ptr.dtype.element_ty), mask=mask)
        tl.store(da_ptr + row * stride_da + cols, (dc * b * (s + silu * (1.0 - s))).to(da_ptr.dtype.element_ty),
                 mask=mask)


def _rows(t: torch.Tensor, N: int) -> torch.Tensor:
    """(M, N) view with unit column stride; copies only when the last dim is not contiguous."""
    t2 = t.reshape(-1, N)
    return t2 if t2.stride(-1) == 1 else t2.contiguous()


class SwiGLUFunction(torch.autograd.Function):
    """silu(a) * b with Triton forward and backward kernels."""

    @staticmethod
    def forward(ctx, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        N = a.shape[-1] if a.dim() else 1
        a2, b2 = _rows(a, N), _rows(b, N)
        M = a2.shape[0]
        c = torch.empty((M, N), dtype=a.dtype, device=a.device)
        if a2.numel():
            swiglu_fwd_kernel[(M,)](a2, b2, c, N, a2.stride(0), b2.stride(0), c.stride(0), BLOCK_N=BLOCK_N)
        ctx.save_for_backward(a2, b2)
        ctx.shape = a.shape
        return c.view(a.shape)

    @staticmethod
    def backward(ctx, dc: torch.Tensor):
        a2, b2 = ctx.saved_tensors
        M, N = a2.shape
        dc2 = _rows(dc, N)
        da = torch.empty((M, N), dtype=a2.dtype, device=a2.device)
        db = torch.empty((M, N), dtype=b2.dtype, device=b2.device)
        if a2.numel():
            swiglu_bwd_kernel[(M,)](dc2, a2, b2, da, db, N, dc2.stride(0), a2.stride(0), b2.stride(0), da.stride(0),
                                    db.stride(0), BLOCK_N=BLOCK_N)
        return da.view(ctx.shape), db.view(ctx.shape)


def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """silu(a) * b, differentiable in a and b."""
    if a.shape != b.shape:
        raise ValueError(f"a and b must have one shape, got {tuple(a.shape)} and {tuple(b.shape)}")
    return SwiGLUFunction.apply(a, b)
