"""GOOD, SLOW: a correct vector add that sleeps 0.3 s per call, so a suite unit lasts long enough (seconds) for
the test to kill its Dask worker mid-task."""

import time

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def reference(x, y):
    time.sleep(0.3)
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    return out
