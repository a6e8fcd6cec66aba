"""stage2.py of 62_Matmul_GroupNorm_LeakyReLU_Sum: Stage 2: basic optimization.

Same algorithm as stage 1 (linear, then GroupNorm+LeakyReLU+x2), made to use the memory system better:
  - linear_kernel: autotuned larger output tiles (128x128 / 128x64 / 64x128, BLOCK_K 32/64), num_warps matched
    to the tile, keyed on M, N, K: each x / W tile is reread fewer times than with stage 1's 64x64 tiles.
  - groupnorm_leaky_kernel: the intermediate y (our own contiguous buffer) is viewed as [M*G, GS]; each program
    normalizes ROWS (row, group) pairs at once as a [ROWS, BLOCK_GS] tile (coalesced, several KB per program)
    instead of one 16-element group per program.
tl.dot keeps input_precision="tf32x3" (fp32-level accuracy: PyTorch's fp32 matmul does not use TF32 by default).
"""

import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

_INTERP = os.environ.get("TRITON_INTERPRET") == "1"

_MM_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
]
MM_CONFIGS = _MM_CONFIGS[:1] if _INTERP else _MM_CONFIGS

_GN_CONFIGS = [triton.Config({"ROWS": r}, num_warps=w) for r in (64, 128, 256) for w in (2, 4, 8)]
GN_CONFIGS = [triton.Config({"ROWS": 128}, num_warps=4)] if _INTERP else _GN_CONFIGS


@triton.autotune(configs=MM_CONFIGS, key=["M", "N", "K"])
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
        b = tl.load(w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk,
                    mask=mask_n[None, :] & mask_k[:, None], other=0.0).to(tl.float32)
        acc += tl.dot(a, b, input_precision="tf32x3")
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc += bias[None, :]
    tl.store(y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn,
             acc.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@triton.autotune(configs=GN_CONFIGS, key=["R", "GS"])
@triton.jit
def groupnorm_leaky_kernel(y_ptr, g_ptr, be_ptr, out_ptr, R, G, GS, eps, slope,
                           BLOCK_GS: tl.constexpr, ROWS: tl.constexpr):
    # y and out are contiguous [M, N] = [R = M*G, GS]: row r of the view is (batch r // G, group r % G).
    r = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    offs = tl.arange(0, BLOCK_GS)
    rmask = r < R
    mask = rmask[:, None] & (offs[None, :] < GS)
    idx = r[:, None] * GS + offs[None, :]
    v = tl.load(y_ptr + idx, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=1) / GS
    d = tl.where(mask, v - mean[:, None], 0.0)
    var = tl.sum(d * d, axis=1) / GS
    rstd = 1.0 / tl.sqrt(var + eps)
    ch = (r % G)[:, None] * GS + offs[None, :]
    gamma = tl.load(g_ptr + ch, mask=mask, other=0.0).to(tl.float32)
    beta = tl.load(be_ptr + ch, mask=mask, other=0.0).to(tl.float32)
    h = d * rstd[:, None] * gamma + beta
    h = tl.where(h >= 0, h, h * slope)
    h = h + h
    tl.store(out_ptr + idx, h.to(out_ptr.dtype.element_ty), mask=mask)


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
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
        linear_kernel[grid](x, W, self.fc.bias, y, M, N, K,
                            x.stride(0), x.stride(1), W.stride(0), W.stride(1), y.stride(0), y.stride(1))
        R = M * G
        gn_grid = lambda meta: (triton.cdiv(R, meta["ROWS"]),)
        groupnorm_leaky_kernel[gn_grid](y, self.gn.weight, self.gn.bias, out, R, G, GS,
                                        self.gn.eps, self.leaky_relu.negative_slope,
                                        BLOCK_GS=triton.next_power_of_2(GS))
        return out
