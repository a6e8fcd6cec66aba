# label: good
import torch
import triton
import triton.language as tl


@triton.jit
def block_scale_kernel(x_ptr, out_ptr, n_rows, n_cols, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    blk = tl.program_id(0)
    rows = blk * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=mask, other=0.0)
    scale = tl.max(tl.max(tl.abs(x), axis=1), axis=0) + 1e-12  # one scale per block of ROWS rows
    tl.store(out_ptr + rows[:, None] * n_cols + cols[None, :], x / scale, mask=mask)


def block_scale(x: torch.Tensor) -> torch.Tensor:
    """x divided by the max |x| of its block of 4 rows (blockwise quantization's scaling: rows share a scale)."""
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty_like(x)
    block_scale_kernel[(triton.cdiv(m, 4),)](x, out, m, n, ROWS=4, BLOCK=triton.next_power_of_2(n))
    return out
