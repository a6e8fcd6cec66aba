"""stage2.py of 21_Conv2d_Add_Scale_Sigmoid_GroupNorm: Stage 2: basic optimization.

Changes from stage 1 (same math):
  * the convolution is an implicit GEMM on tl.dot: one program computes a [BLOCK_P pixels x all C_out] tile,
    reducing over K = (ci, kw) for each kh (C_in*KS padded to a power of 2 >= 16). fp32 accuracy is kept with
    input_precision="tf32x3" (the reference is an fp32 conv);
  * conv bias + bias + scale + sigmoid are fused into the conv epilogue (the stage-1 elementwise kernel and
    its HBM round trip are gone);
  * GroupNorm is one kernel per (n, group): a one-read per-lane Welford pass for the statistics (combined
    across lanes with Chan's formula), then the normalize pass (stage 1: 2 reads for stats + 1 for apply);
  * @triton.autotune on the block sizes / warps keyed on the sizes (a single config under the interpreter).
"""

import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"

_CONV_CONFIGS = [triton.Config({"BLOCK_P": bp}, num_warps=w) for bp in (64, 128, 256) for w in (4, 8)]
CONV_CONFIGS = [triton.Config({"BLOCK_P": 256}, num_warps=4)] if _INTERPRET else _CONV_CONFIGS

_GN_CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((1024, 4), (2048, 8), (4096, 8))]
GN_CONFIGS = [triton.Config({"BLOCK": 1024}, num_warps=4)] if _INTERPRET else _GN_CONFIGS


@triton.autotune(configs=CONV_CONFIGS, key=["C_in", "C_out", "OH", "OW"])
@triton.jit
def conv_bias_scale_sigmoid_kernel(x_ptr, w_ptr, cb_ptr, bias_ptr, scale_ptr, y_ptr,
                                   C_in, C_out, OH, OW,
                                   sxn, sxc, sxh, sxw,
                                   KS: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_CO: tl.constexpr,
                                   BLOCK_P: tl.constexpr):
    pid_p = tl.program_id(0)
    n = tl.program_id(1).to(tl.int64)
    P = OH * OW
    offs_p = pid_p.to(tl.int64) * BLOCK_P + tl.arange(0, BLOCK_P)
    pmask = offs_p < P
    oh = offs_p // OW
    ow = offs_p % OW
    k = tl.arange(0, BLOCK_K)
    ci = k // KS
    kw = k % KS
    kmask = k < C_in * KS
    co = tl.arange(0, BLOCK_CO)
    comask = co < C_out
    x_base = x_ptr + n * sxn
    a_off = ci[None, :].to(tl.int64) * sxc + oh[:, None] * sxh + (ow[:, None] + kw[None, :]) * sxw
    a_mask = pmask[:, None] & kmask[None, :]
    w_off = co[None, :] * (C_in * KS * KS) + ci[:, None] * (KS * KS) + kw[:, None]
    w_mask = kmask[:, None] & comask[None, :]
    acc = tl.zeros((BLOCK_P, BLOCK_CO), dtype=tl.float32)
    for kh in range(0, KS):
        a = tl.load(x_base + a_off + kh * sxh, mask=a_mask, other=0.0).to(tl.float32)
        wt = tl.load(w_ptr + w_off + kh * KS, mask=w_mask, other=0.0).to(tl.float32)
        acc = tl.dot(a, wt, acc, input_precision="tf32x3")
    cb = tl.load(cb_ptr + co, mask=comask, other=0.0).to(tl.float32)
    b = tl.load(bias_ptr + co, mask=comask, other=0.0).to(tl.float32)
    s = tl.load(scale_ptr + co, mask=comask, other=0.0).to(tl.float32)
    z = (acc + (cb + b)[None, :]) * s[None, :]
    y = 1.0 / (1.0 + tl.exp(-z))
    y_off = (n * C_out + co[None, :]) * P + offs_p[:, None]
    tl.store(y_ptr + y_off, y, mask=pmask[:, None] & comask[None, :])


@triton.autotune(configs=GN_CONFIGS, key=["group_size", "CPG", "P"])
@triton.jit
def groupnorm_kernel(y_ptr, gamma_ptr, beta_ptr, out_ptr, group_size, G, CPG, P, eps, BLOCK: tl.constexpr):
    # one program per (n, group); the group's elements are contiguous: [CPG channels x P pixels]
    g = tl.program_id(0).to(tl.int64)
    base = g * group_size
    c_first = (g % G) * CPG
    # per-lane Welford over the group (one read), then Chan's combine across the lanes
    cnt = tl.zeros((BLOCK,), dtype=tl.float32)
    mean = tl.zeros((BLOCK,), dtype=tl.float32)
    m2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, group_size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < group_size
        v = tl.load(y_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
        cnt_new = cnt + tl.where(m, 1.0, 0.0)
        delta = v - mean
        mean = tl.where(m, mean + delta / tl.maximum(cnt_new, 1.0), mean)
        m2 = tl.where(m, m2 + delta * (v - mean), m2)
        cnt = cnt_new
    total = tl.sum(cnt, axis=0)
    gmean = tl.sum(cnt * mean, axis=0) / total
    d = mean - gmean
    var = (tl.sum(m2, axis=0) + tl.sum(cnt * d * d, axis=0)) / total
    rstd = 1.0 / tl.sqrt(var + eps)
    for start in range(0, group_size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < group_size
        v = tl.load(y_ptr + base + offs, mask=m, other=0.0).to(tl.float32)
        c = c_first + offs // P
        gam = tl.load(gamma_ptr + c, mask=m, other=0.0).to(tl.float32)
        bet = tl.load(beta_ptr + c, mask=m, other=0.0).to(tl.float32)
        out = (v - gmean) * rstd * gam + bet
        tl.store(out_ptr + base + offs, out.to(out_ptr.dtype.element_ty), mask=m)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups, bias_shape, scale_shape):
        # Model's constructor, copied: the same parameter names let the validator load its weights.
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scale = nn.Parameter(torch.randn(scale_shape))
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        N, C_in, H, W = x.shape
        w = self.conv.weight.contiguous()
        C_out, _, KS, _ = w.shape
        OH, OW = H - KS + 1, W - KS + 1
        P = OH * OW
        G = self.group_norm.num_groups
        CPG = C_out // G
        out = torch.empty((N, C_out, OH, OW), dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        y = torch.empty((N, C_out, OH, OW), dtype=torch.float32, device=x.device)
        BLOCK_K = max(16, triton.next_power_of_2(C_in * KS))
        BLOCK_CO = max(16, triton.next_power_of_2(C_out))
        grid = lambda meta: (triton.cdiv(P, meta["BLOCK_P"]), N)
        conv_bias_scale_sigmoid_kernel[grid](
            x, w, self.conv.bias, self.bias, self.scale, y, C_in, C_out, OH, OW,
            x.stride(0), x.stride(1), x.stride(2), x.stride(3),
            KS=KS, BLOCK_K=BLOCK_K, BLOCK_CO=BLOCK_CO)
        groupnorm_kernel[(N * G,)](y, self.group_norm.weight, self.group_norm.bias, out,
                                   CPG * P, G, CPG, P, self.group_norm.eps)
        return out
