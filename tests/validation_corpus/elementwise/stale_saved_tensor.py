"""CHEAT (stale result): computes once per shape and afterwards returns the saved tensor."""

import torch
import triton
import triton.language as tl

_SAVED = {}


@triton.jit
def gate_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * tl.sigmoid(y), mask=mask)


def reference(x, y):
    if x.shape in _SAVED:
        return _SAVED[x.shape]
    xc, yc = x.contiguous(), y.contiguous()
    out = torch.empty_like(xc)
    n = xc.numel()
    if n:
        gate_kernel[(triton.cdiv(n, 256),)](xc, yc, out, n, BLOCK=256)
    _SAVED[x.shape] = out
    return out
