"""BAD (PyTorch produces the result): runs the reference's whole op sequence, then a Triton kernel that only
copies the result. Fails pytorch_compute, rule reference_recomputed."""

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def reference(x, w, b):
    res = (torch.sigmoid(torch.nn.functional.linear(x, w, b)) * 2.0 + 1.0).contiguous()
    out = torch.empty_like(res)
    copy_kernel[(triton.cdiv(res.numel(), 256),)](res, out, res.numel(), BLOCK=256)
    return out
