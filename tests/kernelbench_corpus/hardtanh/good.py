"""Correct: flat masked kernel over a contiguous copy; the clamp keeps NaN (as torch's hardtanh does)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hardtanh_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.where(x > 1.0, 1.0, tl.where(x < -1.0, -1.0, x))  # comparisons are false for NaN: it passes through
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n:
            hardtanh_kernel[(triton.cdiv(n, 2048),)](x, out, n, BLOCK=2048)
        return out
