"""Order-independent atomics: an integer counter and a float maximum."""

import torch
import triton
import triton.language as tl


@triton.jit
def count_positive_kernel(count_ptr, max_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=-float("inf"))
    tl.atomic_add(count_ptr, tl.sum((x > 0).to(tl.int32), axis=0))
    tl.atomic_max(max_ptr, tl.max(x, axis=0))


def count_positive(x: torch.Tensor):
    x = x.contiguous()
    count = torch.zeros((), device=x.device, dtype=torch.int32)
    mx = torch.full((), -float("inf"), device=x.device, dtype=torch.float32)
    count_positive_kernel[(triton.cdiv(x.numel(), 4096),)](count, mx, x, x.numel(), BLOCK=4096, num_warps=8)
    return count, mx
