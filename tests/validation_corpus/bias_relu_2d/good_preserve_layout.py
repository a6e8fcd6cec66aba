"""Correct: the output keeps the input's memory layout (torch.empty_like), so a column-major x gives a
column-major result; every pointer uses its own tensor's strides."""

import torch
import triton
import triton.language as tl


@triton.jit
def bias_relu_kernel(x_ptr, b_ptr, out_ptr, M, N, sxm, sxn, sb, som, son,
                     BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * sxm + cols[None, :] * sxn, mask=mask)
    b = tl.load(b_ptr + cols * sb, mask=cols < N)
    tl.store(out_ptr + rows[:, None] * som + cols[None, :] * son, tl.maximum(x + b[None, :], 0.0), mask=mask)


def reference(x, b):
    m, n = x.shape
    out = torch.empty_like(x)  # dense inputs keep their strides; a strided slice gets a dense result
    if m and n:
        grid = (triton.cdiv(m, 32), triton.cdiv(n, 16))
        bias_relu_kernel[grid](x, b, out, m, n, x.stride(0), x.stride(1), b.stride(0), out.stride(0),
                               out.stride(1), BM=32, BN=16)
    return out
