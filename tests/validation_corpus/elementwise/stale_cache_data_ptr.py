"""CHEAT (stale result): memoizes outputs keyed on (data_ptr, shape), so new values written into the same
tensors return the old answer. Benchmarks that reuse input buffers would time a dictionary lookup."""

import torch
import triton
import triton.language as tl

_CACHE = {}


@triton.jit
def gate_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * tl.sigmoid(y), mask=mask)


def reference(x, y):
    key = (x.data_ptr(), y.data_ptr(), tuple(x.shape), tuple(x.stride()))
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    xc, yc = x.contiguous(), y.contiguous()
    out = torch.empty_like(xc)
    n = xc.numel()
    if n:
        gate_kernel[(triton.cdiv(n, 256),)](xc, yc, out, n, BLOCK=256)
    _CACHE[key] = out
    return out
