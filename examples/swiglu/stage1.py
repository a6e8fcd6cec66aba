"""Stage 1: a flat elementwise kernel over contiguous copies, forward and backward (autograd.Function).

c = silu(a) * b = a * sigmoid(a) * b. Backward recomputes sigmoid(a) from the saved inputs (cheaper than storing
it): db = dc * silu(a), da = dc * b * (s + silu(a) * (1 - s)) with s = sigmoid(a).
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def swiglu_fwd_kernel(a_ptr, b_ptr, c_ptr, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(c_ptr + offs, (a * tl.sigmoid(a) * b).to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def swiglu_bwd_kernel(dc_ptr, a_ptr, b_ptr, da_ptr, db_ptr, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    dc = tl.load(dc_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(a)
    silu = a * s
    tl.store(db_ptr + offs, (dc * silu).to(db_ptr.dtype.element_ty), mask=mask)
    tl.store(da_ptr + offs, (dc * b * (s + silu * (1.0 - s))).to(da_ptr.dtype.element_ty), mask=mask)


class SwiGLUFunction(torch.autograd.Function):
    """silu(a) * b with Triton forward and backward kernels."""

    @staticmethod
    def forward(ctx, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = a.contiguous(), b.contiguous()
        c = torch.empty_like(a)
        if a.numel():
            swiglu_fwd_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, c, a.numel(), BLOCK=BLOCK)
        ctx.save_for_backward(a, b)
        return c

    @staticmethod
    def backward(ctx, dc: torch.Tensor):
        a, b = ctx.saved_tensors
        dc = dc.contiguous()
        da, db = torch.empty_like(a), torch.empty_like(b)
        if a.numel():
            swiglu_bwd_kernel[(triton.cdiv(a.numel(), BLOCK),)](dc, a, b, da, db, a.numel(), BLOCK=BLOCK)
        return da, db


def swiglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """silu(a) * b, differentiable in a and b."""
    if a.shape != b.shape:
        raise ValueError(f"a and b must have one shape, got {tuple(a.shape)} and {tuple(b.shape)}")
    return SwiGLUFunction.apply(a, b)
