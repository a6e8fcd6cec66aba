"""2-D tiling whose grid floors both dimensions, and a lambda grid that floors too."""

import torch
import triton
import triton.language as tl


@triton.jit
def add2d_kernel(out_ptr, a_ptr, b_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1).to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    offs = rm[:, None] * stride_m + rn[None, :]
    a = tl.load(a_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr + offs, a + b, mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 4096}, num_warps=8)],
                 key=["n"])
@triton.jit
def neg_kernel(out_ptr, x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, -tl.load(x_ptr + offs, mask=mask, other=0.0), mask=mask)


def add2d(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    a, b = a.contiguous(), b.contiguous()
    M, N = a.shape
    out = torch.empty_like(a)
    grid = (M // 32, N // 64)  # planted: grid_floor_division
    add2d_kernel[grid](out, a, b, M, N, a.stride(0), BLOCK_M=32, BLOCK_N=64)
    return out


def neg(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    neg_kernel[lambda meta: (n // meta["BLOCK"],)](out, x, n)  # planted: grid_floor_division
    return out
