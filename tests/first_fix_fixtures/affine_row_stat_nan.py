"""BUG (NaN reaches elements it should not): adds `0 * sum(row)` (a leftover of a normalization) to each element.
Finite inputs: exact. One NaN or inf in a row makes the whole row NaN: `nan_propagation` on the nan_inf variant. The
kernel has no nan_to_num, clamp, tl.maximum/minimum or tl.where, so the first fix must not blame them (issue 29)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def affine_rows_kernel(x_ptr, out_ptr, n_cols, stride_xr, stride_xc, stride_or, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xr + cols * stride_xc, mask=mask, other=0.0)
    stat = tl.sum(x, axis=0)
    tl.store(out_ptr + row * stride_or + cols, x * 2.0 + 1.0 + 0.0 * stat, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        if x.numel() == 0:
            return out
        affine_rows_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), x.stride(1), out.stride(0),
                                          BLOCK=triton.next_power_of_2(x.shape[1]))
        return out
