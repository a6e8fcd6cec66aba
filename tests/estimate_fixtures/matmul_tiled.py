"""Correct tiled fp32 matmul in tf32 (BLOCK 32 x 32 x 32): tl.dot FLOPs 2 M N K, each A tile read N / 32 times."""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :], mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K))
        b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :], mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N))
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def reference(a, b):
    (m, k), n = a.shape, b.shape[1]
    c = torch.empty((m, n), device=a.device, dtype=torch.float32)
    matmul_kernel[(triton.cdiv(m, 32), triton.cdiv(n, 32))](a, b, c, m, n, k, BM=32, BN=32, BK=32)
    return c
