"""Fault: a device-side assert that always fires (debug=True compiles tl.device_assert in)."""

import torch
import triton
import triton.language as tl


@triton.jit(debug=True)
def assert_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.device_assert(offs < 0, "planted device assert")
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def reference(x, y):
    out = torch.empty_like(x)
    assert_kernel[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    if x.is_cuda:
        torch.cuda.synchronize()
    return out
