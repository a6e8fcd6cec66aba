"""GOOD: the same kernel with the row offset in int64 (row.to(tl.int64) * stride): right at the full size too."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def relu3_kernel(x_ptr, y_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    for c0 in range(0, n_cols, BLOCK):
        offs = c0 + tl.arange(0, BLOCK)
        mask = offs < n_cols
        x = tl.load(x_ptr + row * stride_row + offs, mask=mask)
        tl.store(y_ptr + row * stride_row + offs, tl.maximum(x, 0.0) * 3.0, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        relu3_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=1024)
        return y
