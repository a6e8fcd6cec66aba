"""Fault: a kernel whose compilation practically never ends: a huge tl.static_range unroll.

On a GPU the compiler unrolls 2**24 bodies; under the interpreter the loop simply runs for hours.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(x_ptr + offs, mask=mask)
    for _ in tl.static_range(UNROLL):
        acc = acc * 1.0
    tl.store(out_ptr + offs, acc + tl.load(y_ptr + offs, mask=mask), mask=mask)


def reference(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(max(n, 1), 256),)](x, y, out, n, BLOCK=256, UNROLL=1 << 24)
    return out
