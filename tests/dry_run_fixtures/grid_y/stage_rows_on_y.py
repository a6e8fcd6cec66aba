"""BAD at full size: one program per (column block, row), the rows on grid axis 1. Right at every size the
interpreter runs; at the problem's 100,000 rows the grid's y dimension is over CUDA's 65,535 and the launch fails."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_kernel(x_ptr, y_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    col_block = tl.program_id(0)
    row = tl.program_id(1)
    offs = col_block * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride_row + offs, mask=mask)
    tl.store(y_ptr + row * stride_row + offs, 2.0 * x + 1.0, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        rows, cols = x.shape
        grid = (triton.cdiv(cols, 256), rows)
        affine_kernel[grid](x, y, cols, x.stride(0), BLOCK=256)
        return y
