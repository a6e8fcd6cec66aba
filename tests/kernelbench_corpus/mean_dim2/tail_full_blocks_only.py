"""PLANTED BUG (tail): the column loop stops at the last full block (range(0, N - BLOCK_C + 1, BLOCK_C), no column
mask), so a partial last block is left out of the mean. Invisible at the full size (2048 is a multiple of 512)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def mean_last_kernel(x_ptr, out_ptr, R1, R, N, stride_xb, stride_xr, stride_xc, stride_ob, stride_or,
                     BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_mask = rows < R
    b = (rows // R1).to(tl.int64)
    r = (rows % R1).to(tl.int64)
    base = x_ptr + b * stride_xb + r * stride_xr
    acc = tl.zeros((BLOCK_R, BLOCK_C), dtype=tl.float32)
    for c0 in range(0, N - BLOCK_C + 1, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        mask = row_mask[:, None]
        acc += tl.load(base[:, None] + cols[None, :] * stride_xc, mask=mask, other=0.0)
    tl.store(out_ptr + b * stride_ob + r * stride_or, tl.sum(acc, axis=1) / N, mask=row_mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 3 and self.dim == 2
        B, R1, N = x.shape
        out = torch.empty((B, R1), dtype=x.dtype, device=x.device)
        R = B * R1
        if R:
            mean_last_kernel[(triton.cdiv(R, 4),)](x, out, R1, R, N, x.stride(0), x.stride(1), x.stride(2),
                                                   out.stride(0), out.stride(1), BLOCK_R=4, BLOCK_C=512)
        return out
