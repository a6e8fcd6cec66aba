"""Correct: 2-D tiles over (rows, columns) through both strides; grid = cdiv in both dims."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_kernel(x_ptr, out_ptr, M, N, stride_xm, stride_xn, stride_om, stride_on,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None].to(tl.int64) * stride_xm + cols[None, :] * stride_xn, mask=mask)
    y = x / (1.0 + tl.exp(-x))
    tl.store(out_ptr + rows[:, None].to(tl.int64) * stride_om + cols[None, :] * stride_on, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        M, N = x.shape
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if out.numel():
            grid = (triton.cdiv(M, 4), triton.cdiv(N, 1024))
            swish_kernel[grid](x, out, M, N, x.stride(0), x.stride(1), out.stride(0), out.stride(1),
                               BLOCK_M=4, BLOCK_N=1024)
        return out
