"""Valid Triton: .to() on a range() loop variable (a tensor on the GPU; a Python int under the bare interpreter,
which worker/device/interp_compat.py makes a tensor too, issue 40)."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)
    for i in range(0, 2):
        acc += i.to(tl.int64).to(tl.float32) * 0.0
    tl.store(out_ptr + offs, acc, mask=mask)


def reference(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)  # LAUNCH
    return out
