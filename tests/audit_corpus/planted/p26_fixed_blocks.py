"""A shape-sensitive row kernel with host-picked blocks and no autotuning."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_scale_kernel(out_ptr, x_ptr, w_ptr, n_rows, n_cols, stride,  # planted: missing_autotune
                     BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + rows[:, None] * stride + cols[None, :], x * w[None, :], mask=mask)


def row_scale(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    x, w = x.contiguous(), w.contiguous()
    m, n = x.shape
    out = torch.empty_like(x)
    row_scale_kernel[(triton.cdiv(m, 4),)](out, x, w, m, n, x.stride(0), BLOCK_R=4, BLOCK_C=1024, num_warps=4)
    return out
