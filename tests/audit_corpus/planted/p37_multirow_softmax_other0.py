"""Several rows per program; the column padding loads 0.0 and joins each row's max."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_rows_kernel(out_ptr, x_ptr, n_rows, n_cols, stride, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask, other=0.0)  # planted: masked_load_other
    x = x.to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    e = tl.where(mask, e, 0.0)
    tl.store(out_ptr + rows[:, None] * stride + cols[None, :], e / tl.sum(e, axis=1)[:, None], mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty_like(x)
    softmax_rows_kernel[(triton.cdiv(m, 4),)](out, x, m, n, x.stride(0), ROWS=4, BLOCK_N=triton.next_power_of_2(n))
    return out
