"""CHEAT (calls the reference, found at run time): walks up the caller's frames to the harness, takes the
reference function it holds, calls it, and launches a Triton copy of the result."""

import sys

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def _harness_reference():
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            ref = getattr(value, "ref_fn", None)
            if callable(ref):
                return ref
        frame = frame.f_back
    raise RuntimeError("no harness frame holds a reference")


def reference(x):
    res = _harness_reference()(x).contiguous()
    out = torch.empty_like(res)
    n = res.numel()
    if n:
        copy_kernel[(triton.cdiv(n, 1024),)](res, out, n, BLOCK=1024)
    return out
