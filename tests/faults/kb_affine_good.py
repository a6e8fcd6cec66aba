"""CORRECT (copy of tests/kernelbench_fixtures/affine_good.py): 2x + 1 by rows, through both strides."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_rows_kernel(x_ptr, out_ptr, n_cols, stride_xr, stride_xc, stride_or, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_xr + cols * stride_xc, mask=mask)
        tl.store(out_ptr + row * stride_or + cols, x * 2.0 + 1.0, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        if x.numel() == 0:
            return out
        affine_rows_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), x.stride(1), out.stride(0), BLOCK=512)
        return out
