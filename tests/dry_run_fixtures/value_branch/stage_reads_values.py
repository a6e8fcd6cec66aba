"""GOOD, but its wrapper reads a tensor value on the host (x.abs().max().item(), to skip an all-zero input): fake
tensors have no values, so the dry run at full size cannot follow it and says so; the validated sizes' launches stand
in (labelled)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, 2.0 * x + 1.0, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        if x.abs().max().item() == 0.0:  # a value read on the host
            return torch.ones_like(x)
        y = torch.empty_like(x)
        affine_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
