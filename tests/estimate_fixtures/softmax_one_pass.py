"""Correct: one program per row, the row loaded once and stored once (analytic: 4 M N bytes each way)."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    e = tl.exp(z)
    tl.store(out_ptr + row * stride_row + cols, e / tl.sum(e, axis=0), mask=mask)


def reference(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    m, n = x.shape
    softmax_kernel[(m,)](x, out, n, x.stride(0), BLOCK=triton.next_power_of_2(n))
    return out
