"""PLANTED BUG (stride misuse): rows are indexed by the column count (r * C) and batches by R * C instead of the
input's strides. Right for a contiguous input, which is all get_inputs() ever gives; wrong for any other layout."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_dim1_kernel(x_ptr, out_ptr, R, C, stride_ob, stride_oc, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_b = tl.program_id(0).to(tl.int64)
    pid_c = tl.program_id(1)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    col_mask = cols < C
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < R) & col_mask[None, :]
        ptrs = x_ptr + pid_b * R * C + rows[:, None].to(tl.int64) * C + cols[None, :]
        acc += tl.sum(tl.load(ptrs, mask=mask, other=0.0), axis=0)
    tl.store(out_ptr + pid_b * stride_ob + cols * stride_oc, acc, mask=col_mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, R, C = x.shape
        out = torch.empty((B, 1, C), dtype=x.dtype, device=x.device)
        if out.numel():
            sum_dim1_kernel[(B, triton.cdiv(C, 128))](x, out, R, C, out.stride(0), out.stride(2),
                                                      BLOCK_R=16, BLOCK_C=128)
        return out
