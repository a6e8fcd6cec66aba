"""BUG (off-by-one offsets): x is read one element ahead of y and of the output (x_ptr + offs + 1)."""

import torch
import triton
import triton.language as tl


@triton.jit
def gate_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs + 1, mask=offs + 1 < n, other=0.0)  # should be x_ptr + offs
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * tl.sigmoid(y), mask=mask)


def reference(x, y):
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        gate_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    return out
