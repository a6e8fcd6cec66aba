"""tl.arange with a runtime bound, with a literal that is not a power of two, and a launch block of 96."""

import torch
import triton
import triton.language as tl


@triton.jit
def relu_row_kernel(y_ptr, x_ptr, stride, n_cols):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, n_cols)  # planted: nonconstexpr_arange
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row * stride + cols, tl.maximum(x, 0.0), mask=cols < n_cols)


@triton.jit
def head_kernel(y_ptr, x_ptr, stride):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, 100)  # planted: nonconstexpr_arange
    x = tl.load(x_ptr + row * stride + cols, mask=cols < 100, other=0.0)
    tl.store(y_ptr + row * 100 + cols, x, mask=cols < 100)


@triton.jit
def scale_kernel(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, 2.0 * tl.load(x_ptr + offs, mask=mask, other=0.0), mask=mask)


def run(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    relu_row_kernel[(x.shape[0],)](y, x, x.stride(0), x.shape[1])
    head = torch.empty((x.shape[0], 100), device=x.device, dtype=x.dtype)
    head_kernel[(x.shape[0],)](head, x, x.stride(0))
    scale_kernel[(triton.cdiv(x.numel(), 96),)](y, y, x.numel(), BLOCK=96)  # planted: nonconstexpr_arange
    return y
