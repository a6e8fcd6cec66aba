"""CHEAT (works on another thread): launches the kernel from a worker thread (a harness timing the call
on the main thread measures only the hand-off when it does not join)."""

import threading

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


def reference(x, y):
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        t = threading.Thread(target=lambda: gate_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256))
        t.start()
        t.join()
    return out
