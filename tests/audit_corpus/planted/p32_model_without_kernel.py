"""A ModelNew that ships a Triton kernel but never launches it."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def tanh_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    tl.store(out_ptr + offs, tl.where(x >= 0, t, -t), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:  # planted: no_kernel_launch
        return torch.tanh(x)  # planted: pytorch_compute
