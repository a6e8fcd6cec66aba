"""logsumexp in fp32 (cast right after the load) that never subtracts the maximum."""

import torch
import triton
import triton.language as tl


@triton.jit
def logsumexp_kernel(out_ptr, x_ptr, stride_row, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for c0 in range(0, N, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * stride_row + cols, mask=cols < N, other=-float("inf"))
        x = x.to(tl.float32)
        acc += tl.exp(x)  # planted: unshifted_exp
    tl.store(out_ptr + row, tl.log(tl.sum(acc, axis=0)))


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    m, n = x.shape
    out = torch.empty((m,), device=x.device, dtype=torch.float32)
    logsumexp_kernel[(m,)](out, x, x.stride(0), n, BLOCK_N=1024)
    return out
