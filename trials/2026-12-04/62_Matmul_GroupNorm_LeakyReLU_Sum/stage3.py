"""stage3.py of 62_Matmul_GroupNorm_LeakyReLU_Sum: Stage 3: advanced optimization.

Fusion: GroupNorm + LeakyReLU + (x + x) run in the matmul's epilogue on the fp32 accumulator, so the [M, N]
intermediate never goes through HBM (stage 2 wrote and re-read it). Each program owns BLOCK_M rows and
GPT = BLOCK_N // GS_P2 whole groups: the N tile is laid out as [GPT, GS_P2] (group, channel-in-group, padded to
a power of 2 and masked), so any group size works and every group's statistics are computed in registers
(two-pass mean / variance over the tile, fp32). W rows are gathered per group (each row contiguous in K).
  - 1-D grid with GROUP_M grouped ordering (programs running together share x / W panels in L2);
  - autotuned BLOCK_M / BLOCK_K / GROUP_M / num_warps / num_stages keyed on M, N, K, GS;
  - tl.dot input_precision="tf32x3" (fp32-level accuracy; PyTorch's fp32 matmul does not use TF32 by default).
Groups wider than 256 channels (GS_P2 > MAX_GS_P2) would need a [BLOCK_M, GS] accumulator too large for
registers: those go to the stage-2 style unfused path (Triton matmul, then Triton GroupNorm kernel).
"""

import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

_INTERP = os.environ.get("TRITON_INTERPRET") == "1"
MAX_GS_P2 = 256

_FUSED_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
    triton.Config({"BLOCK_M": 64, "BLOCK_K": 64, "GROUP_M": 4}, num_warps=4, num_stages=3),
]
FUSED_CONFIGS = _FUSED_CONFIGS[:1] if _INTERP else _FUSED_CONFIGS


@triton.autotune(configs=FUSED_CONFIGS, key=["M", "N", "K", "GS"])
@triton.jit
def fused_linear_gn_kernel(x_ptr, w_ptr, b_ptr, g_ptr, be_ptr, out_ptr, M, N, K, G, GS, eps, slope,
                           stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
                           BLOCK_N: tl.constexpr, GS_P2: tl.constexpr,
                           BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    GPT: tl.constexpr = BLOCK_N // GS_P2  # whole groups per tile
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(G, GPT)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    j = tl.arange(0, BLOCK_N)
    grp = pid_n.to(tl.int64) * GPT + j // GS_P2  # group of each tile column
    cig = j % GS_P2  # channel within the group
    mask_n = (grp < G) & (cig < GS)
    offs_n = grp * GS + cig  # output channel of each tile column (padding lanes masked)
    mask_m = offs_m < M

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        mask_k = offs_k < K
        a = tl.load(x_ptr + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk,
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0).to(tl.float32)
        b = tl.load(w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk,
                    mask=mask_n[None, :] & mask_k[:, None], other=0.0).to(tl.float32)
        acc += tl.dot(a, b, input_precision="tf32x3")

    # Epilogue: bias, GroupNorm over each [GS] slice of the tile, affine, LeakyReLU, x + x.
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    gamma = tl.load(g_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    beta = tl.load(be_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    v = acc + bias[None, :]
    valid = mask_n[None, :] & (offs_m[:, None] >= 0)  # [BLOCK_M, BLOCK_N]
    v = tl.where(valid, v, 0.0)
    v3 = tl.reshape(v, (BLOCK_M, GPT, GS_P2))
    valid3 = tl.reshape(valid, (BLOCK_M, GPT, GS_P2))
    mean = tl.sum(v3, axis=2) / GS
    d3 = tl.where(valid3, v3 - mean[:, :, None], 0.0)
    var = tl.sum(d3 * d3, axis=2) / GS
    rstd = 1.0 / tl.sqrt(var + eps)
    h = tl.reshape(d3 * rstd[:, :, None], (BLOCK_M, BLOCK_N))
    h = h * gamma[None, :] + beta[None, :]
    h = tl.where(h >= 0, h, h * slope)
    h = h + h
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
             h.to(out_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


# ---- unfused path for groups wider than MAX_GS_P2 channels (stage 2's kernels) ----
_MM_CONFIGS = [
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=8, num_stages=3),
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}, num_warps=4, num_stages=4),
]
MM_CONFIGS = _MM_CONFIGS[:1] if _INTERP else _MM_CONFIGS


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


@triton.jit
def wide_groupnorm_leaky_kernel(y_ptr, g_ptr, be_ptr, out_ptr, G, GS, eps, slope,
                                stride_ym, stride_om, BLOCK: tl.constexpr):
    # one program per (row, group); loops over the group in BLOCK chunks (two passes for mean / var).
    row = tl.program_id(0).to(tl.int64)
    grp = tl.program_id(1).to(tl.int64)
    base_y = y_ptr + row * stride_ym + grp * GS
    base_o = out_ptr + row * stride_om + grp * GS
    offs = tl.arange(0, BLOCK)
    s = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, GS, BLOCK):
        m = (c0 + offs) < GS
        s += tl.load(base_y + c0 + offs, mask=m, other=0.0)
    mean = tl.sum(s, axis=0) / GS
    ss = tl.zeros((BLOCK,), tl.float32)
    for c0 in range(0, GS, BLOCK):
        m = (c0 + offs) < GS
        d = tl.where(m, tl.load(base_y + c0 + offs, mask=m, other=0.0) - mean, 0.0)
        ss += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(ss, axis=0) / GS + eps)
    for c0 in range(0, GS, BLOCK):
        m = (c0 + offs) < GS
        ch = grp * GS + c0 + offs
        v = tl.load(base_y + c0 + offs, mask=m, other=0.0)
        gamma = tl.load(g_ptr + ch, mask=m, other=0.0).to(tl.float32)
        beta = tl.load(be_ptr + ch, mask=m, other=0.0).to(tl.float32)
        h = (v - mean) * rstd * gamma + beta
        h = tl.where(h >= 0, h, h * slope)
        h = h + h
        tl.store(base_o + c0 + offs, h.to(out_ptr.dtype.element_ty), mask=m)


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
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if M == 0 or N == 0:
            return out
        eps = self.gn.eps
        slope = self.leaky_relu.negative_slope
        GS_P2 = triton.next_power_of_2(GS)
        if GS_P2 <= MAX_GS_P2:
            BLOCK_N = max(128, GS_P2)
            GPT = BLOCK_N // GS_P2
            grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(G, GPT),)
            fused_linear_gn_kernel[grid](x, W, self.fc.bias, self.gn.weight, self.gn.bias, out,
                                         M, N, K, G, GS, eps, slope,
                                         x.stride(0), x.stride(1), W.stride(0), W.stride(1),
                                         out.stride(0), out.stride(1),
                                         BLOCK_N=BLOCK_N, GS_P2=GS_P2)
            return out
        y = torch.empty((M, N), dtype=torch.float32, device=x.device)
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
        linear_kernel[grid](x, W, self.fc.bias, y, M, N, K,
                            x.stride(0), x.stride(1), W.stride(0), W.stride(1), y.stride(0), y.stride(1))
        wide_groupnorm_leaky_kernel[(M, G)](y, self.gn.weight, self.gn.bias, out, G, GS, eps, slope,
                                            y.stride(0), out.stride(0), BLOCK=1024)
        return out
