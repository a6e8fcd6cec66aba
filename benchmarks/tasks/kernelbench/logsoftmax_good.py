"""Correct: one program per row, three passes over the row (max, sum of exp(x - max), x - max - log(sum)):
torch's own formula, so NaN and inf inputs give what torch gives (a NaN anywhere makes the row NaN)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def logsoftmax_kernel(x_ptr, out_ptr, N, stride_xr, stride_or, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = tl.full((BLOCK,), float("-inf"), tl.float32)
    nans = tl.zeros((BLOCK,), tl.int32)
    for c0 in range(0, N, BLOCK):
        c = c0 + cols
        x = tl.load(x_ptr + row * stride_xr + c, mask=c < N, other=float("-inf")).to(tl.float32)
        nans += (x != x).to(tl.int32)  # max() may drop NaN; count them instead
        m = tl.maximum(m, x)
    row_max = tl.max(m, axis=0)
    row_max = tl.where(tl.sum(nans, axis=0) > 0, float("nan"), row_max)
    s = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, N, BLOCK):
        c = c0 + cols
        x = tl.load(x_ptr + row * stride_xr + c, mask=c < N, other=float("-inf")).to(tl.float32)
        s += tl.where(c < N, tl.exp(x - row_max), 0.0)
    lse = row_max + tl.log(tl.sum(s, axis=0))
    for c0 in range(0, N, BLOCK):
        c = c0 + cols
        x = tl.load(x_ptr + row * stride_xr + c, mask=c < N, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * stride_or + c, x - lse, mask=c < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 2
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty_like(x)
        if out.numel():
            logsoftmax_kernel[(M,)](x, out, N, x.stride(0), out.stride(0), BLOCK=2048, num_warps=8)
        return out
