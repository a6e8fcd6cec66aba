"""Correct: one program per (batch, column block); loops over dim 1 with the input's own strides."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sum_dim1_kernel(x_ptr, out_ptr, R, C, stride_xb, stride_xr, stride_xc, stride_ob, stride_oc,
                    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_b = tl.program_id(0).to(tl.int64)
    pid_c = tl.program_id(1)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    col_mask = cols < C
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for r0 in range(0, R, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        mask = (rows[:, None] < R) & col_mask[None, :]
        ptrs = x_ptr + pid_b * stride_xb + rows[:, None].to(tl.int64) * stride_xr + cols[None, :] * stride_xc
        acc += tl.sum(tl.load(ptrs, mask=mask, other=0.0), axis=0)
    tl.store(out_ptr + pid_b * stride_ob + cols * stride_oc, acc, mask=col_mask)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 3 and self.dim == 1
        B, R, C = x.shape
        out = torch.empty((B, 1, C), dtype=x.dtype, device=x.device)
        if out.numel():
            grid = (B, triton.cdiv(C, 128))
            sum_dim1_kernel[grid](x, out, R, C, x.stride(0), x.stride(1), x.stride(2), out.stride(0), out.stride(2),
                                  BLOCK_R=16, BLOCK_C=128)
        return out
