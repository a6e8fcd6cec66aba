"""Correct: tl.dot with input_precision="tf32x3" (3xTF32) is close to fp32 on the GPU and here."""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr):
    rm = tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K))
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N))
        acc = tl.dot(a, b, acc, input_precision="tf32x3")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def reference(a, b):
    a, b = a.contiguous(), b.contiguous()
    (m, k), n = a.shape, b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=torch.float32)
    matmul_kernel[(1,)](a, b, c, m, n, k, BLOCK_M=16, BLOCK_N=16, BLOCK_K=256)
    return c
