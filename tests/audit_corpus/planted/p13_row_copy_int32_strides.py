"""Row gather: int32 row offsets, and a column stride that is accepted but never used."""

import torch
import triton
import triton.language as tl


@triton.jit
def gather_rows_kernel(out_ptr, x_ptr, idx_ptr, stride_xm, stride_xn, n_cols,  # planted: ignored_strides
                       BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    src = tl.load(idx_ptr + row)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + src * stride_xm + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * n_cols + cols, x, mask=mask)  # planted: int32_offset_overflow


def gather_rows(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    n = x.shape[1]
    out = torch.empty((idx.numel(), n), device=x.device, dtype=x.dtype)
    gather_rows_kernel[(idx.numel(),)](out, x, idx.contiguous(), x.stride(0), x.stride(1), n,
                                       BLOCK_N=triton.next_power_of_2(n))
    return out
