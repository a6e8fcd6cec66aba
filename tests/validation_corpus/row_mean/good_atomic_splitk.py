"""Correct: split each row over column blocks; every program adds its float32 partial mean with
tl.atomic_add. The order of the atomics varies run to run on a GPU, which only changes rounding."""

import torch
import triton
import triton.language as tl


@triton.jit
def partial_mean_kernel(x_ptr, acc_ptr, stride_m, stride_n, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < n_cols, other=0.0)
    tl.atomic_add(acc_ptr + row, tl.sum(x.to(tl.float32), axis=0) / n_cols)


def reference(x):
    m, n = x.shape
    acc = torch.zeros(m, dtype=torch.float32, device=x.device)
    if m and n:
        partial_mean_kernel[(m, triton.cdiv(n, 64))](x, acc, x.stride(0), x.stride(1), n, BLOCK=64)
    return acc.to(x.dtype)
