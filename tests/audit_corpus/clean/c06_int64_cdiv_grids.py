"""int64 offsets before every multiply; grids from triton.cdiv and from the (n + B - 1) // B idiom."""

import torch
import triton
import triton.language as tl


@triton.jit
def axpy_kernel(y_ptr, x_ptr, a, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, a * x + y, mask=mask)


@triton.jit
def row_scale_kernel(out_ptr, x_ptr, s_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * stride
    for c0 in range(0, n_cols, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + base + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + base + cols, x * tl.load(s_ptr + row), mask=cols < n_cols)


def axpy(a: float, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()
    n = x.numel()
    BLOCK = 1024
    axpy_kernel[((n + BLOCK - 1) // BLOCK,)](y, x, a, n, BLOCK=BLOCK, num_warps=4)
    return y


def row_scale(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    x, s = x.contiguous(), s.contiguous()
    out = torch.empty_like(x)
    grid = (x.shape[0],)
    row_scale_kernel[grid](out, x, s, x.stride(0), x.shape[1], BLOCK_N=2048)
    n_blocks = triton.cdiv(x.numel(), 1024)
    axpy_kernel[(n_blocks,)](out, x, 0.0, x.numel(), BLOCK=1024)
    return out
