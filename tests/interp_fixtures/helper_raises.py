"""Known error: a @jit helper called by the kernel fails (the report points at the helper's line)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _combine(a, b):
    for i in tl.static_range(0, 2):  # unrolled: i stays a Python int under the interpreter
        a += i.to(tl.float32) * 0.0  # EXPECT: interp_python_int
    return a + b


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    out = _combine(tl.load(x_ptr + offs, mask=mask), tl.load(y_ptr + offs, mask=mask))  # CALL
    tl.store(out_ptr + offs, out, mask=mask)


def reference(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)  # LAUNCH
    return out
