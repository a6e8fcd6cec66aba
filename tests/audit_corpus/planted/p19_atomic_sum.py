"""A global sum with one float atomic_add per program."""

import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32)
    tl.atomic_add(out_ptr, tl.sum(x, axis=0))  # planted: atomic_order


def total(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.zeros((), device=x.device, dtype=torch.float32)
    sum_kernel[(triton.cdiv(x.numel(), 4096),)](out, x, x.numel(), BLOCK=4096)
    return out
