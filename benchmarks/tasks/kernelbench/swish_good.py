"""Correct: flat elementwise swish, int64 offsets (1.6 G elements), any layout made contiguous first."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * tl.sigmoid(x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n:
            swish_kernel[(triton.cdiv(n, 4096),)](x, out, n, BLOCK=4096)
        return out
