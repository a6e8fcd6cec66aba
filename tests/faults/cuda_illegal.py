"""Fault: a kernel reading 2**40 elements past its input (an illegal address on a GPU, wild host memory under
the interpreter)."""

import torch
import triton
import triton.language as tl


@triton.jit
def bad_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs + (1 << 40))
    tl.store(out_ptr + offs, v)


def reference(x, y):
    out = torch.empty_like(x)
    bad_kernel[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    if x.is_cuda:
        torch.cuda.synchronize()
    return out
