"""Correct but wasteful: reads each row three times (max pass, sum pass, write pass) in chunks of 256, as a
stage that recomputes instead of keeping the row in registers (analytic: 12 M N bytes loaded, 4 M N stored)."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_3pass_kernel(x_ptr, out_ptr, n_cols, stride_row, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * stride_row
    m = -float("inf")
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        m = tl.maximum(m, tl.max(tl.load(base + cols, mask=cols < n_cols, other=-float("inf")), axis=0))
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        s += tl.sum(tl.exp(tl.load(base + cols, mask=cols < n_cols, other=-float("inf")) - m), axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < n_cols, other=-float("inf"))
        tl.store(out_ptr + row * stride_row + cols, tl.exp(x - m) / s, mask=cols < n_cols)


def reference(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    m, n = x.shape
    softmax_3pass_kernel[(m,)](x, out, n, x.stride(0), BLOCK=256)
    return out
