"""A 2-D transpose that takes all four strides and then indexes as if both tensors were contiguous."""

import torch
import triton
import triton.language as tl


@triton.jit
def transpose_kernel(out_ptr, in_ptr, M, N, stride_im, stride_in, stride_om, stride_on,  # planted: ignored_strides
                     BLOCK: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    rm = pid_m * BLOCK + tl.arange(0, BLOCK)
    rn = pid_n * BLOCK + tl.arange(0, BLOCK)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(in_ptr + rm[:, None] * N + rn[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + rn[None, :] * M + rm[:, None], tile, mask=mask)


def transpose(x: torch.Tensor) -> torch.Tensor:
    M, N = x.shape
    out = torch.empty((N, M), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
    transpose_kernel[grid](out, x, M, N, x.stride(0), x.stride(1), out.stride(0), out.stride(1), BLOCK=32)
    return out
