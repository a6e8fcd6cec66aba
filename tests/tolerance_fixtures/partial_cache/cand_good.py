"""Correct: x * 2 + sum(w), nothing cached."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_add_kernel(x_ptr, w_ptr, out_ptr, n, m, BLOCK: tl.constexpr, BLOCK_W: tl.constexpr):
    offs_w = tl.arange(0, BLOCK_W)
    s = tl.sum(tl.load(w_ptr + offs_w, mask=offs_w < m, other=0.0), 0)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2 + s, mask=mask)


def reference(x, w):
    out = torch.empty_like(x)
    scale_add_kernel[(triton.cdiv(x.numel(), 1024),)](x, w, out, x.numel(), w.numel(), BLOCK=1024,
                                                      BLOCK_W=triton.next_power_of_2(max(w.numel(), 16)))
    return out
