"""Correct: makes x contiguous first, then a flat 1-D kernel; the column of element i is i % N."""

import torch
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(x_ptr, b_ptr, out_ptr, total, N, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs % N, mask=mask)
    tl.store(out_ptr + offs, tl.maximum(x + b, 0.0), mask=mask)


def reference(x, b):
    x, b = x.contiguous(), b.contiguous()
    out = torch.empty_like(x)
    total = x.numel()
    if total:
        bias_relu_kernel[(triton.cdiv(total, 256),)](x, b, out, total, x.shape[1], BLOCK=256)
    return out
