"""Fault: a kernel that never gets compiled: its @triton.heuristics block-size rule loops forever."""

import torch
import triton
import triton.language as tl


def _block_size(args):
    n = 1
    while n > 0:  # meant to find the next power of two; never terminates
        n = n | 1
    return n


@triton.heuristics({"BLOCK": _block_size})
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def reference(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    add_kernel[(triton.cdiv(max(n, 1), 256),)](x, y, out, n)
    return out
