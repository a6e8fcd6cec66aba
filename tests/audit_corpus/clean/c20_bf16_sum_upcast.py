"""Reductions of bf16 data that upcast first (or pass dtype=), and a loop accumulator declared fp32."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(out_ptr, x_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    head = tl.load(x_ptr + row * stride + tl.arange(0, BLOCK_N), mask=tl.arange(0, BLOCK_N) < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0) + 0.0 * tl.sum(head, axis=0, dtype=tl.float32))


def row_sum(x: torch.Tensor) -> torch.Tensor:
    xb = x.to(torch.bfloat16).contiguous()
    m, n = xb.shape
    out = torch.empty((m,), device=x.device, dtype=torch.float32)
    row_sum_kernel[(m,)](out, xb, xb.stride(0), n, BLOCK_N=1024)
    return out
