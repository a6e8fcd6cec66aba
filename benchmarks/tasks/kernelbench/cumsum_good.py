"""Correct: one program per row, BLOCK-column chunks scanned with tl.cumsum plus a running carry."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cumsum_kernel(x_ptr, out_ptr, N, stride_xr, stride_xc, stride_or, stride_oc, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    carry = tl.zeros((), dtype=tl.float32)
    for c0 in range(0, N, BLOCK):
        c = c0 + cols
        mask = c < N
        x = tl.load(x_ptr + row * stride_xr + c * stride_xc, mask=mask, other=0.0).to(tl.float32)
        y = tl.cumsum(x, axis=0) + carry
        tl.store(out_ptr + row * stride_or + c * stride_oc, y, mask=mask)
        # The chunk's last lane holds the running total (masked lanes add 0); a masked sum rather than
        # carry += tl.sum(x), which Triton 3.6 rejects in a loop that also holds a scan.
        carry = tl.sum(tl.where(cols == BLOCK - 1, y, 0.0), axis=0)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 2 and self.dim == 1
        M, N = x.shape
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if out.numel():
            cumsum_kernel[(M,)](x, out, N, x.stride(0), x.stride(1), out.stride(0), out.stride(1), BLOCK=1024)
        return out
