"""Scale, then softmax, as two kernels with a full-size buffer between them."""

import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(out_ptr, x_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0) * scale, mask=mask)


@triton.jit
def softmax_kernel(out_ptr, x_ptr, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


def scaled_softmax(x: torch.Tensor, scale: float) -> torch.Tensor:
    x = x.contiguous()
    M, N = x.shape
    tmp = torch.empty_like(x)
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 1024),)](tmp, x, x.numel(), scale, BLOCK=1024)  # planted: unfused_intermediate
    softmax_kernel[(M,)](out, tmp, N, BLOCK_N=triton.next_power_of_2(N))
    return out
