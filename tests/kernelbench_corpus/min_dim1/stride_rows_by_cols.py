"""PLANTED BUG (stride misuse): rows indexed by the column count (r * C) and batches by R * C instead of the input's
strides. Right for the contiguous tensor get_inputs() draws; wrong for any other layout."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def min_dim1_kernel(x_ptr, out_ptr, R, C, stride_xb, stride_xr, stride_xc, stride_ob, stride_oc,
                    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_b = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_mask = cols < C
    best = tl.full((BLOCK_C,), float("inf"), dtype=tl.float32)
    nans = tl.zeros((BLOCK_C,), dtype=tl.int32)
    for r0 in range(0, R, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < R) & col_mask[None, :]
        ptrs = x_ptr + pid_b * R * C + rows[:, None].to(tl.int64) * C + cols[None, :]
        x = tl.load(ptrs, mask=mask, other=float("inf"))
        nans += tl.sum((x != x).to(tl.int32), axis=0)
        best = tl.minimum(best, tl.min(tl.where(x != x, float("inf"), x), axis=0))
    best = tl.where(nans > 0, float("nan"), best)
    tl.store(out_ptr + pid_b * stride_ob + cols * stride_oc, best, mask=col_mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 3 and self.dim == 1
        B, R, C = x.shape
        out = torch.empty((B, C), dtype=x.dtype, device=x.device)
        if out.numel():
            min_dim1_kernel[(B, triton.cdiv(C, 128))](x, out, R, C, x.stride(0), x.stride(1), x.stride(2),
                                                      out.stride(0), out.stride(1), BLOCK_R=16, BLOCK_C=128)
        return out
