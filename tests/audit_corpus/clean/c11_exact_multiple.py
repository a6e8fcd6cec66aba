"""Unmasked loads in a kernel whose wrapper refuses sizes that are not a multiple of the block."""

import torch
import triton
import triton.language as tl


@triton.jit
def double_kernel(y_ptr, x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, 2 * tl.load(x_ptr + offs))


def double(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    if x.numel() % 4096:
        raise ValueError("double() needs a multiple of 4096 elements")
    y = torch.empty_like(x)
    double_kernel[(x.numel() // 4096,)](y, x, BLOCK=4096, num_warps=8)
    return y
