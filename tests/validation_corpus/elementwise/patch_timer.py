"""CHEAT (patches timers): freezes time.perf_counter during the call so the harness times ~0 ms."""

import time

import torch
import triton
import triton.language as tl


@triton.jit
def gate_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * tl.sigmoid(y), mask=mask)


_FROZEN = time.perf_counter()


def reference(x, y):
    time.perf_counter = lambda: _FROZEN
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        gate_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    return out
