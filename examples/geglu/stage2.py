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
def geglu_fwd_kernel(a_ptr, b_ptr, c_ptr, N, stride_a, stride_b, stride_c, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        mask = cols < N
        a = tl.load(a_ptr + row * stride_a + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + row * stride_b + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(c_ptr + row * stride_c + cols, (_gelu_tanh(a) * b).to(c_ptr.dtype.element_ty), mask=mask)


@triton.jit
def geglu_bwd_kernel(dc_ptr, a_ptr, b_ptr, da_ptr, db_ptr, N, stride_dc, stride_a, stride_b, stride_da, stride_db,
                      BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        mask = cols < N
        dc = tl.load(dc_ptr + row * stride_dc + cols, mask=mask, other=0.0).to(tl.float32)
        a = tl.load(a_ptr + row * stride_a + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + row * stride_b + cols, mask=mask, other=0.0).to(tl.float32)
        g, dg = _gelu_tanh_and_grad(a)
        tl.store(db_ptr + row * stride_db + cols, (dc * g).to(db_ptr.dtype.element_ty), mask=mask)
        tl.store(da_ptr + row * stride_da + cols, (dc * b * dg).to(da_ptr.dtype.element_ty),
                 mask=mask)


def _rows(t: torch.Tensor, N: int) -> torch.Tensor:
    """(M, N) view with unit column stride; copies only when the last dim is not contiguous."""
    t2 = t.reshape(-1, N)
    return t2 if t2.stride(-1) == 1 else t2.contiguous()


class GeGLUFunction(torch.autograd.Function):
    """gelu_tanh(a) * b with Triton forward and backward kernels."""

    @staticmethod
    def forward(ctx, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        N = a.shape[-1] if a.dim() else 1
        a2, b2 = _rows(a, N), _rows(b, N)
        M = a2.shape[0]
        c = torch.empty((M, N), dtype=a.dtype, device=a.device)
        if a2.numel():
            geglu_fwd_kernel[(M,)](a2, b2, c, N, a2.stride(0), b2.stride(0), c.stride(0), BLOCK_N=BLOCK_N)
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
            geglu_bwd_kernel[(M,)](dc2, a2, b2, da, db, N, dc2.stride(0), a2.stride(0), b2.stride(0), da.stride(0),
                                    db.stride(0), BLOCK_N=BLOCK_N)
        return da.view(ctx.shape), db.view(ctx.shape)


def geglu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """gelu_tanh(a) * b, differentiable in a and b."""
    if a.shape != b.shape:
        raise ValueError(f"a and b must have one shape, got {tuple(a.shape)} and {tuple(b.shape)}")
    return GeGLUFunction.apply(a, b)
