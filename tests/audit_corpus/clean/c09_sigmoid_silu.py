"""SiLU and a stable sigmoid: exp of -x or of -|x|, never summed; not a softmax."""

import torch
import triton
import triton.language as tl


@triton.jit
def silu_kernel(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = x / (1.0 + tl.exp(-x))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def sigmoid_kernel(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    z = tl.exp(-tl.abs(x))
    y = tl.where(x >= 0, 1.0 / (1.0 + z), z / (1.0 + z))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def silu(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    silu_kernel[(triton.cdiv(x.numel(), 1024),)](y, x, x.numel(), BLOCK=1024)
    return y


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    sigmoid_kernel[(triton.cdiv(x.numel(), 1024),)](y, x, x.numel(), BLOCK=1024)
    return y
