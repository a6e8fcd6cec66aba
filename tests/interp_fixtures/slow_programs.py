"""Slow, not stuck: a correct add launched over far more programs than it needs (most are masked off), which
takes minutes under the interpreter; a short timeout_s must say "slow" with the program counts."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def reference(x, y):
    out = torch.empty_like(x)
    add_kernel[(1_000_000,)](x, y, out, x.numel(), BLOCK=16)
    return out
