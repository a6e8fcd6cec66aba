"""Stage 1: a flat elementwise kernel over contiguous copies, forward and backward (autograd.Function).

c = gelu_tanh(a) * b. Backward recomputes gelu_tanh(a) and its derivative from the saved inputs (cheaper than
storing them): db = dc * gelu_tanh(a), da = dc * b * gelu_tanh'(a).
"""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _tanh(z):
    # 2 * sigmoid(2z) - 1: tl.sigmoid exists on every Triton version and under the interpreter (libdevice's tanh
    # is per-backend); in fp32 it loses nothing that matters here (t enters as 1 + t).
    return 2.0 * tl.sigmoid(2.0 * z) - 1.0


@triton.jit
def _gelu_tanh(a):
    return 0.5 * a * (1.0 + _tanh((a + 0.044715 * a * a * a) * 0.7978845608028654))  # 0.797...: sqrt(2 / pi)


@triton.jit
def _gelu_tanh_and_grad(a):
    """gelu_tanh(a) and its derivative 0.5 (1 + t) + 0.5 a (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 a^2)."""
    t = _tanh((a + 0.044715 * a * a * a) * 0.7978845608028654)  # sqrt(2 / pi)
    g = 0.5 * a * (1.0 + t)
    dg = 0.5 * (1.0 + t) + 0.5 * a * (1.0 - t * t) * 0.7978845608028654 * (1.0 + 0.134145 * a * a)
    return g, dg


@triton.jit
def geglu_fwd_kernel(a_ptr, b_ptr, c_ptr, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(c_ptr + offs, (_gelu_tanh(a) * b).to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def geglu_bwd_kernel(dc_ptr, a_ptr, b_ptr, da_ptr, db_ptr, numel, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    dc = tl.load(dc_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g, dg = _gelu_tanh_and_grad(a)
    tl.store(db_ptr + offs, (dc * g).to(db_ptr.dtype.element_ty), mask=mask)
    tl.store(da_ptr + offs, (dc * b * dg).to(da_ptr.dtype.element_ty), mask=mask)


class GeGLUFunction(torch.autograd.Function):
    """gelu_tanh(a) * b with Triton forward and backward kernels."""

    @staticmethod
    def forward(ctx, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = a.contiguous(), b.contiguous()
        c = torch.empty_like(a)
        if a.numel():
            geglu_fwd_kernel[(triton.cdiv(a.numel(), BLOCK),)](a, b, c, a.numel(), BLOCK=BLOCK)
        ctx.save_for_backward(a, b)
        return c

    @staticmethod
    def backward(ctx, dc: torch.Tensor):
        a, b = ctx.saved_tensors
        dc = dc.contiguous()
        da, db = torch.empty_like(a), torch.empty_like(b)
        if a.numel():
            geglu_bwd_kernel[(triton.cdiv(a.numel(), BLOCK),)](dc, a, b, da, db, a.numel(), BLOCK=BLOCK)
        return da, db


def geglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """gelu_tanh(a) * b, differentiable in a and b."""
    if a.shape != b.shape:
        raise ValueError(f"a and b must have one shape, got {tuple(a.shape)} and {tuple(b.shape)}")
    return GeGLUFunction.apply(a, b)
