"""Correct: accumulates tl.dot(..., input_precision="tf32x3") onto a loaded accumulator whose row 0 is NaN.

The GPU keeps that NaN (F32DotTC adds C after the three TF32 dots); an emulation that feeds C into the first dot and
then zeroes NaNs drops it and this candidate fails with finite values where the reference has NaN.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_acc_kernel(a_ptr, b_ptr, c_ptr, out_ptr, M, N, K: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    mn_mask = (rm[:, None] < M) & (rn[None, :] < N)
    acc = tl.load(c_ptr + rm[:, None] * N + rn[None, :], mask=mn_mask, other=0.0)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K))
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N))
        acc = tl.dot(a, b, acc, input_precision="tf32x3")
    tl.store(out_ptr + rm[:, None] * N + rn[None, :], acc, mask=mn_mask)


def reference(a, b, c):
    a, b, c = a.contiguous(), b.contiguous(), c.contiguous()
    (m, k), n = a.shape, b.shape[1]
    out = torch.empty((m, n), device=a.device, dtype=torch.float32)
    matmul_acc_kernel[(1,)](a, b, c, out, m, n, k, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16)
    return out
