"""PLANTED BUG (stride misuse): a flat 1-D kernel over x.data_ptr() without .contiguous(): element i is read at
offset i, which is right only for a contiguous input (all get_inputs() ever gives)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        n = x.numel()
        if n:
            swish_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        return out
