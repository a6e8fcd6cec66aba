"""Sizes passed as tl.constexpr: every new shape compiles the kernel again."""

import torch
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(out_ptr, x_ptr, b_ptr, M: tl.constexpr, n_cols: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = (cols < n_cols) & (row < M)
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, tl.maximum(x + b, 0.0), mask=mask)


def bias_relu(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    x, b = x.contiguous(), b.contiguous()
    M, N = x.shape
    out = torch.empty_like(x)
    bias_relu_kernel[(M,)](out, x, b, M,  # planted: constexpr_recompile
                           n_cols=x.shape[1],  # planted: constexpr_recompile
                           BLOCK_N=triton.next_power_of_2(N))
    return out
