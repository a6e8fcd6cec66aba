"""stage1.py of 45_Gemm_Sigmoid_LogSumExp: Stage 1, a direct, correct translation.

Three kernels, one per op group of the reference:
  1. H = sigmoid(x @ W1^T + b1)   (tiled matmul, bias + sigmoid epilogue)
  2. Y = H @ W2^T + b2            (tiled matmul, bias epilogue)
  3. out[m] = logsumexp(Y[m, :])  (one program per row, chunked two-pass max / sum-exp)
fp32 accumulation, tl.dot in "ieee" (exact fp32, the reference does not use TF32), masks on every
load/store, int64 offsets, strides passed for every tensor.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_kernel(a_ptr, w_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_wn, stride_wk, stride_cm, stride_cn,
                  APPLY_SIGMOID: tl.constexpr,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # C[m, n] = act(sum_k A[m, k] * W[n, k] + b[n])
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = offs_m < M
    mask_n = offs_n < N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        mask_k = offs_k < K
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak,
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0).to(tl.float32)
        # W tile loaded as [BLOCK_K, BLOCK_N] (W^T)
        w = tl.load(w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk,
                    mask=mask_n[None, :] & mask_k[:, None], other=0.0).to(tl.float32)
        acc = tl.dot(a, w, acc, input_precision="ieee")
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc = acc + bias[None, :]
    if APPLY_SIGMOID:
        acc = 1.0 / (1.0 + tl.exp(-acc))
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn,
             acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def row_logsumexp_kernel(y_ptr, out_ptr, N, stride_ym, stride_yn, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    # pass 1: row max
    m_vec = tl.full((BLOCK_N,), -float("inf"), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        v = tl.load(y_ptr + row * stride_ym + cols * stride_yn, mask=cols < N,
                    other=-float("inf")).to(tl.float32)
        m_vec = tl.maximum(m_vec, v)
    m = tl.max(m_vec, axis=0)
    # guard an all -inf row: exp(-inf - -inf) = nan
    m_safe = tl.where(m == -float("inf"), 0.0, m)
    # pass 2: sum of exp(y - max)
    s_vec = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        cols = n0 + tl.arange(0, BLOCK_N)
        v = tl.load(y_ptr + row * stride_ym + cols * stride_yn, mask=cols < N,
                    other=-float("inf")).to(tl.float32)
        s_vec += tl.exp(v - m_safe)
    s = tl.sum(s_vec, axis=0)
    res = m_safe + tl.log(s)
    tl.store(out_ptr + row, res.to(out_ptr.dtype.element_ty))


def _linear(a, weight, bias, apply_sigmoid):
    M, K = a.shape
    N = weight.shape[0]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    if M == 0 or N == 0:
        return c
    BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 32
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    linear_kernel[grid](a, weight, bias, c, M, N, K,
                        a.stride(0), a.stride(1), weight.stride(0), weight.stride(1),
                        c.stride(0), c.stride(1),
                        APPLY_SIGMOID=apply_sigmoid,
                        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return c


def _logsumexp_rows(y):
    M, N = y.shape
    out = torch.empty((M,), dtype=y.dtype, device=y.device)
    if M == 0:
        return out
    BLOCK_N = min(triton.next_power_of_2(max(N, 1)), 1024)
    row_logsumexp_kernel[(M,)](y, out, N, y.stride(0), y.stride(1), BLOCK_N=BLOCK_N)
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
