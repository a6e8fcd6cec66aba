"""Known interpreter-only error: arithmetic on bf16 values (the interpreter keeps bf16 as raw 16-bit patterns)."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * 2.0, mask=mask)  # EXPECT: interp_bf16 (a GPU computes this correctly)


def reference(a, b):
    a = a.contiguous()
    out = torch.empty_like(a)
    n = a.numel()
    scale_kernel[(triton.cdiv(n, 512),)](a, out, n, BLOCK=512)
    return out
