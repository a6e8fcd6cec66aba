"""A gather wrapper that validates the index values with asserts: each one reads a GPU value on the host."""

import torch
import triton
import triton.language as tl


@triton.jit
def gather_rows_kernel(out_ptr, table_ptr, idx_ptr, n_idx, D: tl.constexpr, BLOCK_D: tl.constexpr):
    i = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_D)
    row = tl.load(idx_ptr + i).to(tl.int64)
    v = tl.load(table_ptr + row * D + cols, mask=cols < D, other=0.0)
    tl.store(out_ptr + i * D + cols, v, mask=cols < D)


def gather_rows(table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    table, idx = table.contiguous(), idx.contiguous()
    assert idx.dim() == 1 and table.dim() == 2
    assert (idx >= 0).all(), "negative index"  # planted: device_assert_sync
    assert idx.max().item() < table.shape[0]  # planted: device_assert_sync, host_sync
    n_idx, D = idx.numel(), table.shape[1]
    out = torch.empty((n_idx, D), device=table.device, dtype=table.dtype)
    gather_rows_kernel[(n_idx,)](out, table, idx, n_idx, D=D, BLOCK_D=triton.next_power_of_2(D))
    return out
