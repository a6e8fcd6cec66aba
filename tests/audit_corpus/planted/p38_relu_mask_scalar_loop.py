"""A chunked row loop whose tail chunk is stored without a mask."""

import torch
import triton
import triton.language as tl


@triton.jit
def leaky_relu_kernel(out_ptr, x_ptr, stride, n_cols, slope, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    for c0 in range(0, n_cols, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + row * stride + cols, tl.where(x > 0, x, x * slope))  # planted: unmasked_access


def leaky_relu(x: torch.Tensor, slope: float = 0.01) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    leaky_relu_kernel[(x.shape[0],)](out, x, x.stride(0), x.shape[1], slope, BLOCK_N=1024)
    return out
