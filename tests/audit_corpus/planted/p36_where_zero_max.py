"""Masked lanes explicitly zeroed, then a row max: an all-negative row returns 0."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_absmax_kernel(out_ptr, x_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask)
    x = tl.where(mask, x, 0.0)
    signed_max = tl.max(x, axis=0)  # planted: masked_lanes_in_reduction
    tl.store(out_ptr + row, signed_max)


def row_signed_max(x: torch.Tensor) -> torch.Tensor:
    m, n = x.shape
    out = torch.empty((m,), device=x.device, dtype=x.dtype)
    row_absmax_kernel[(m,)](out, x, x.stride(0), n, BLOCK_N=triton.next_power_of_2(n))
    return out
