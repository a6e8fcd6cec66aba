"""BUG (input mutated in place): writes the result into x to save an allocation and returns x."""

import triton
import triton.language as tl


@triton.jit
def gate_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x * tl.sigmoid(y), mask=mask)


def reference(x, y):
    x, y = x.contiguous(), y.contiguous()
    n = x.numel()
    if n:
        gate_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
    return x
