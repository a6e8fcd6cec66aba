"""stage1.py of 62_Matmul_GroupNorm_LeakyReLU_Sum: Stage 1: a direct, correct translation.

Two kernels:
  1. linear_kernel: out = x @ W^T + b, one program per (BLOCK_M x BLOCK_N) output tile, fp32 accumulation,
     tl.dot with input_precision="tf32x3" (PyTorch does not allow TF32 for fp32 matmuls by default, so keep
     fp32-level accuracy).
  2. groupnorm_leaky_kernel: one program per (row, group): two-pass mean/var, affine, LeakyReLU, x + x.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, y_ptr, M, N, K,
                  stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
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
        a = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk,
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0).to(tl.float32)
        # W is [N, K]; load the [BLOCK_K, BLOCK_N] tile of W^T
        b = tl.load(w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk,
                    mask=mask_n[None, :] & mask_k[:, None], other=0.0).to(tl.float32)
        acc += tl.dot(a, b, input_precision="tf32x3")
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc += bias[None, :]
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             acc.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def groupnorm_leaky_kernel(y_ptr, g_ptr, be_ptr, out_ptr, N, G, GS, eps, slope,
                           stride_ym, stride_om, BLOCK_GS: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    grp = tl.program_id(1).to(tl.int64)
    offs = tl.arange(0, BLOCK_GS)
    mask = offs < GS
    cols = grp * GS + offs
    v = tl.load(y_ptr + row * stride_ym + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / GS
    d = tl.where(mask, v - mean, 0.0)
    var = tl.sum(d * d, axis=0) / GS
    rstd = 1.0 / tl.sqrt(var + eps)
    gamma = tl.load(g_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    beta = tl.load(be_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    h = d * rstd * gamma + beta
    h = tl.where(h >= 0, h, h * slope)
    h = h + h
    tl.store(out_ptr + row * stride_om + cols, h.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, num_groups, eps=1e-05, negative_slope=0.01):
        # Model's constructor, copied: the same parameter names let the validator load its weights.
        super().__init__()
        self.fc = nn.Linear(input_size, hidden_size)
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=hidden_size, eps=eps)
        self.leaky_relu = nn.LeakyReLU(negative_slope=negative_slope)

    def forward(self, x):
        M, K = x.shape
        W = self.fc.weight
        N = W.shape[0]
        G = self.gn.num_groups
        GS = N // G
        y = torch.empty((M, N), dtype=torch.float32, device=x.device)
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if M == 0 or N == 0:
            return out
        BM, BN, BK = 64, 64, 32
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        linear_kernel[grid](x, W, self.fc.bias, y, M, N, K,
                            x.stride(0), x.stride(1), W.stride(0), W.stride(1), y.stride(0), y.stride(1),
                            BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
        groupnorm_leaky_kernel[(M, G)](y, self.gn.weight, self.gn.bias, out, N, G, GS,
                                       self.gn.eps, self.leaky_relu.negative_slope,
                                       y.stride(0), out.stride(0),
                                       BLOCK_GS=triton.next_power_of_2(GS))
        return out
