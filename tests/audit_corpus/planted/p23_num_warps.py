"""num_warps out of proportion: 32 warps for 128 elements, and one warp for 16384."""

import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 4096}, num_warps=8),
                          triton.Config({"BLOCK": 16384}, num_warps=1)],  # planted: num_warps_mismatch
                 key=["n"])
@triton.jit
def square_kernel(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, x * x, mask=mask)


def copy(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), 128),)](out, x, x.numel(), BLOCK=128,
                                                num_warps=32)  # planted: num_warps_mismatch
    return out


def square(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    square_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](out, x, x.numel())
    return out
