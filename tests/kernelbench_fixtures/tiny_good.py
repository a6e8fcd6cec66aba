"""CORRECT: 1e-5 * x over the flattened, contiguous input."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * SCALE, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        if x.numel():
            scale_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), SCALE=1e-5, BLOCK=1024)
        return out
