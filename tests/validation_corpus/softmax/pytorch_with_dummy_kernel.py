"""CHEAT (PyTorch does the work): torch.softmax computes the result; a Triton copy kernel only moves it,
so "a Triton kernel was launched" holds."""

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def reference(x):
    res = torch.softmax(x, dim=-1).contiguous()
    out = torch.empty_like(res)
    n = res.numel()
    if n:
        copy_kernel[(triton.cdiv(n, 1024),)](res, out, n, BLOCK=1024)
    return out
