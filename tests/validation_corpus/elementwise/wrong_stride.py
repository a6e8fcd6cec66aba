"""BUG (wrong stride): assumes contiguous inputs; a strided view x[::2] is read as if it were dense."""

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
    # missing: x, y = x.contiguous(), y.contiguous()  (or passing x.stride(0) to the kernel)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    n = x.numel()
    if n:
        gate_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    return out
