"""BUG (wrong stride): indexes x as row-major contiguous (row * N + col) instead of using x.stride();
right for torch.randn inputs, wrong for a transposed layout or a slice."""

import torch
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(x_ptr, b_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]  # assumes x.stride() == (N, 1)
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + cols, mask=cols < N)
    tl.store(out_ptr + offs, tl.maximum(x + b[None, :], 0.0), mask=mask)


def reference(x, b):
    m, n = x.shape
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    if m and n:
        bias_relu_kernel[(triton.cdiv(m, 16), triton.cdiv(n, 32))](x, b, out, m, n, BM=16, BN=32)
    return out
