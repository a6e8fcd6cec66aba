"""Correct: flat masked kernel over a contiguous copy; torch's threshold (x > 20: x) and a stable log1p(exp(x))."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softplus_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    # log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)): no overflow; the where keeps NaN (comparisons are false)
    stable = tl.where(x > 0.0, x, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(x)))
    tl.store(out_ptr + offs, tl.where(x > 20.0, x, stable), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n:
            softplus_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        return out
