"""PLANTED BUG (race): dim 1 is split across programs that each load the partial sum, add theirs and store it back
(no atomics), so concurrent programs lose each other's updates on a GPU. Triton's interpreter runs programs one
after another, where the race cannot happen."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_dim1_split_kernel(x_ptr, out_ptr, R, C, stride_xb, stride_xr, stride_xc, stride_ob, stride_oc,
                          ROWS_PER_PROG: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_b = tl.program_id(0).to(tl.int64)
    pid_c = tl.program_id(1)
    pid_r = tl.program_id(2)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    col_mask = cols < C
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for r0 in range(0, ROWS_PER_PROG, BLOCK_R):
        rows = pid_r * ROWS_PER_PROG + r0 + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < R) & col_mask[None, :]
        ptrs = x_ptr + pid_b * stride_xb + rows[:, None].to(tl.int64) * stride_xr + cols[None, :] * stride_xc
        acc += tl.sum(tl.load(ptrs, mask=mask, other=0.0), axis=0)
    out_ptrs = out_ptr + pid_b * stride_ob + cols * stride_oc
    old = tl.load(out_ptrs, mask=col_mask)
    tl.store(out_ptrs, old + acc, mask=col_mask)  # the race: read-modify-write instead of tl.atomic_add


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, R, C = x.shape
        out = torch.zeros((B, 1, C), dtype=x.dtype, device=x.device)
        if out.numel() and R:
            rows_per_prog = 64
            grid = (B, triton.cdiv(C, 128), triton.cdiv(R, rows_per_prog))
            sum_dim1_split_kernel[grid](x, out, R, C, x.stride(0), x.stride(1), x.stride(2), out.stride(0),
                                        out.stride(2), ROWS_PER_PROG=rows_per_prog, BLOCK_R=16, BLOCK_C=128)
        return out
