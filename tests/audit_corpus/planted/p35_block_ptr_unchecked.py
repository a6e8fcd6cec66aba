"""A tile copy through block pointers without boundary_check: the edge tiles go out of bounds."""

import torch
import triton
import triton.language as tl


@triton.jit
def tile_copy_kernel(out_ptr, x_ptr, M, N, stride_m, stride_n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    src = tl.make_block_ptr(base=x_ptr, shape=(M, N), strides=(stride_m, stride_n),
                            offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    dst = tl.make_block_ptr(base=out_ptr, shape=(M, N), strides=(stride_m, stride_n),
                            offsets=(pid_m * BLOCK_M, pid_n * BLOCK_N), block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    tile = tl.load(src)  # planted: block_ptr_boundary
    tl.store(dst, tile)  # planted: block_ptr_boundary


def tile_copy(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    M, N = x.shape
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    tile_copy_kernel[grid](out, x, M, N, x.stride(0), x.stride(1), BLOCK_M=64, BLOCK_N=64)
    return out
