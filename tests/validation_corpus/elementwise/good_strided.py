"""Correct: reads strided (non-contiguous) inputs through their strides instead of copying them."""

import torch
import triton
import triton.language as tl


@triton.jit
def gate_kernel(x_ptr, y_ptr, out_ptr, n, sx, sy, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs * sx, mask=mask)
    y = tl.load(y_ptr + offs * sy, mask=mask)
    tl.store(out_ptr + offs, x * tl.sigmoid(y), mask=mask)


def reference(x, y):
    n = x.numel()
    out = torch.empty(n, dtype=x.dtype, device=x.device)
    if n:
        gate_kernel[(triton.cdiv(n, 128),)](x, y, out, n, x.stride(0), y.stride(0), BLOCK=128)
    return out
