"""Row sums of a bf16 copy: tl.sum keeps bf16, and a column accumulator takes the input's dtype."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(out_ptr, x_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))  # planted: low_precision_accumulator


@triton.jit
def col_sum_kernel(out_ptr, x_ptr, stride, n_rows, n_cols, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0).to(tl.int64) * BLOCK_C + tl.arange(0, BLOCK_C)
    acc = tl.zeros((BLOCK_C,), dtype=x_ptr.dtype.element_ty)  # planted: low_precision_accumulator
    for r in range(0, n_rows):
        acc += tl.load(x_ptr + r * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + cols, acc, mask=cols < n_cols)


def sums(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    xb = x.to(torch.bfloat16).contiguous()
    m, n = xb.shape
    rows = torch.empty((m,), device=x.device, dtype=torch.float32)
    cols = torch.empty((n,), device=x.device, dtype=torch.float32)
    row_sum_kernel[(m,)](rows, xb, xb.stride(0), n, BLOCK_N=triton.next_power_of_2(n))
    col_sum_kernel[(triton.cdiv(n, 256),)](cols, xb, xb.stride(0), m, n, BLOCK_C=256)
    return rows, cols
