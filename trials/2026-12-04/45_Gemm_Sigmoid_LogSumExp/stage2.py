"""stage2.py of 45_Gemm_Sigmoid_LogSumExp: Stage 2, basic optimization.

Same three-step algorithm as stage 1, with:
  * autotuned matmul tiles (keyed on M, N, K), num_warps matched to the tile, num_stages for the K loop;
    larger tiles cut the re-reads of A and W (each A tile is read N/BLOCK_N times, each W tile M/BLOCK_M);
  * bias + sigmoid kept in the GEMM1 epilogue (no separate elementwise pass);
  * the row logsumexp reads Y once (online max / sum-exp over chunks) and handles ROWS rows per program.
Interpreter (TRITON_INTERPRET=1): one config per kernel (the CPU cannot time configs).
"""

import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"

_GEMM_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
]
GEMM_CONFIGS = _GEMM_CONFIGS[:1] if _INTERPRET else _GEMM_CONFIGS

_LSE_CONFIGS = [triton.Config({"ROWS": r}, num_warps=w) for r in (1, 2, 4) for w in (4, 8)]
LSE_CONFIGS = [triton.Config({"ROWS": 4}, num_warps=8)] if _INTERPRET else _LSE_CONFIGS


@triton.autotune(configs=GEMM_CONFIGS, key=["M", "N", "K"])
@triton.jit
def linear_kernel(a_ptr, w_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_wn, stride_wk, stride_cm, stride_cn,
                  APPLY_SIGMOID: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # C[m, n] = act(sum_k A[m, k] * W[n, k] + b[n]); W is nn.Linear's [N, K] (K contiguous)
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    w_ptrs = w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        mask_k = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        w = tl.load(w_ptrs, mask=mask_n[None, :] & mask_k[:, None], other=0.0)
        acc = tl.dot(a, w, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        w_ptrs += BLOCK_K * stride_wk
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    if APPLY_SIGMOID:
        acc = 1.0 / (1.0 + tl.exp(-acc))
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn,
             acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@triton.autotune(configs=LSE_CONFIGS, key=["N", "BLOCK_N"])
@triton.jit
def rows_logsumexp_kernel(y_ptr, out_ptr, M, N, stride_ym, stride_yn,
                          BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    row_mask = rows < M
    m = tl.full((ROWS,), -float("inf"), dtype=tl.float32)
    s = tl.zeros((ROWS,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        mask = row_mask[:, None] & (cols[None, :] < N)
        v = tl.load(y_ptr + rows[:, None] * stride_ym + cols[None, :] * stride_yn, mask=mask,
                    other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(v, axis=1))
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)  # no -inf - -inf
        s = s * tl.exp(m - m_safe) + tl.sum(tl.exp(v - m_safe[:, None]), axis=1)
        m = m_new
    m_safe = tl.where(m == -float("inf"), 0.0, m)
    res = m_safe + tl.log(s)
    tl.store(out_ptr + rows, res.to(out_ptr.dtype.element_ty), mask=row_mask)


def _linear(a, weight, bias, apply_sigmoid):
    M, K = a.shape
    N = weight.shape[0]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if M == 0 or N == 0:
        return c
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
    linear_kernel[grid](a, weight, bias, c, M, N, K,
                        a.stride(0), a.stride(1), weight.stride(0), weight.stride(1),
                        c.stride(0), c.stride(1), APPLY_SIGMOID=apply_sigmoid)
    return c


def _logsumexp_rows(y):
    M, N = y.shape
    out = torch.empty((M,), dtype=y.dtype, device=y.device)
    if M == 0:
        return out
    BLOCK_N = min(triton.next_power_of_2(max(N, 1)), 2048)
    grid = lambda meta: (triton.cdiv(M, meta["ROWS"]),)
    rows_logsumexp_kernel[grid](y, out, M, N, y.stride(0), y.stride(1), BLOCK_N=BLOCK_N)
    return out


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        h = _linear(x, self.linear1.weight, self.linear1.bias, True)
        y = _linear(h, self.linear2.weight, self.linear2.bias, False)
        return _logsumexp_rows(y)
