# label: good
# A KernelBench-form candidate for tests/kernelbench_fixtures/affine_reference.py (2x + 1) that keeps a helper class
# copied from a problem, as `new` tells the assistant to (issue 40, point 3): NewGELU computes in PyTorch and
# launches no kernel, but ModelNew.forward never builds or calls it. The audit follows what runs: no P0 on NewGELU.
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


class NewGELU(nn.Module):
    """minGPT's GELU, copied from the problem file; unused by ModelNew."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


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
