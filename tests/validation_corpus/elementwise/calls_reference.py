"""CHEAT (calls the reference): imports the task's reference and returns its result, copied by a Triton
kernel so that a launch is seen."""

import torch
import triton
import triton.language as tl
from reference import reference as _torch_reference  # the reference file sits next to the candidate


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def reference(x, y):
    res = _torch_reference(x, y).contiguous()
    out = torch.empty_like(res)
    n = res.numel()
    if n:
        copy_kernel[(triton.cdiv(n, 256),)](res, out, n, BLOCK=256)
    return out
