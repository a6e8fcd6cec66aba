"""CHEAT (rewrites its inputs): zeroes x and returns zeros. 0 * sigmoid(y) == 0, so a harness that runs the
reference *after* the candidate on the same tensors would see a match."""

import torch
import triton
import triton.language as tl


@triton.jit
def zero_kernel(ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n)


def reference(x, y):
    n = x.numel()
    out = torch.empty_like(x)
    if n:
        zero_kernel[(triton.cdiv(n, 256),)](out, n, BLOCK=256)
    x.zero_()
    return out
