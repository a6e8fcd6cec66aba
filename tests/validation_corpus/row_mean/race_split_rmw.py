"""BUG (race between programs): split-K over column blocks, but each program does a plain load-add-store on
the row's accumulator instead of tl.atomic_add. Programs of one row run concurrently on a GPU and lose
each other's updates. Triton's interpreter runs programs one after another, so there it looks correct."""

import torch
import triton
import triton.language as tl


@triton.jit
def partial_mean_kernel(x_ptr, acc_ptr, stride_m, stride_n, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < n_cols, other=0.0)
    part = tl.sum(x.to(tl.float32), axis=0) / n_cols
    cur = tl.load(acc_ptr + row)
    tl.store(acc_ptr + row, cur + part)  # should be tl.atomic_add(acc_ptr + row, part)


def reference(x):
    m, n = x.shape
    acc = torch.zeros(m, dtype=torch.float32, device=x.device)
    if m and n:
        partial_mean_kernel[(m, triton.cdiv(n, 32))](x, acc, x.stride(0), x.stride(1), n, BLOCK=32)
    return acc.to(x.dtype)
