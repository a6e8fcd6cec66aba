"""Correct on the problem's (contiguous) inputs; rows are addressed by row * n_cols and the wrapper never calls
.contiguous(), so a transposed or strided input reads the wrong elements: a robustness finding (layouts)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_row_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=float("-inf"))
    x = x - tl.max(x, 0)
    e = tl.exp(x)
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, 0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows, n = x.shape
        y = torch.empty((rows, n), device=x.device, dtype=x.dtype)
        if y.numel():
            softmax_row_kernel[(rows,)](x, y, n, BLOCK=triton.next_power_of_2(n))
        return y
