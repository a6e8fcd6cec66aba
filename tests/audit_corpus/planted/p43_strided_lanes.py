"""Per-column sums with one program per column: the lanes walk down a column, n_cols elements apart."""

import torch
import triton
import triton.language as tl


@triton.jit
def col_sum_kernel(x_ptr, out_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr):
    col = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for r0 in range(0, n_rows, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        x = tl.load(x_ptr + rows * n_cols + col, mask=rows < n_rows, other=0.0)  # planted: uncoalesced_access
        acc += x.to(tl.float32)
    tl.store(out_ptr + col, tl.sum(acc, axis=0))


def col_sum(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    n_rows, n_cols = x.shape
    out = torch.empty(n_cols, device=x.device, dtype=torch.float32)
    col_sum_kernel[(n_cols,)](x, out, n_rows, n_cols, BLOCK_R=256)
    return out
