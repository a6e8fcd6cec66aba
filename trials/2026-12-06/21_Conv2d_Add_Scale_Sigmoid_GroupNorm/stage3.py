"""stage3.py of 21_Conv2d_Add_Scale_Sigmoid_GroupNorm: Stage 3: advanced optimization.

Changes from stage 2:
  * GroupNorm statistics are fused into the conv epilogue: while the [BLOCK_P x C_out] tile of
    y = sigmoid((conv + b) * s) is in registers, each program writes, per channel, the tile's mean and
    centred sum of squares (M2) to a small partial buffer (N x n_pixel_blocks x C_out, ~1/BLOCK_P of y).
    The separate statistics read of y (stage 2: 2 reads of y) is gone: y is written once and read once.
  * a tiny finalize kernel per (n, group) merges the partials in a fixed order with Chan's formula
    (stable, deterministic: no float atomics) into mean and rstd;
  * the normalize pass is a 2D grid (n*C_out, pixel blocks): gamma, beta, mean, rstd are per-program
    scalars (no per-element gathers), a 4096-element contiguous stream per program.
  * conv: tl.dot implicit GEMM as in stage 2 (tf32x3 keeps fp32 accuracy), autotuned with num_stages.
"""

import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"

# BLOCK_P=256 with 4 warps spilled on sm_90 (audit: 255 registers/thread): 256-pixel tiles get 8 warps only
_CONV_CONFIGS = [triton.Config({"BLOCK_P": bp}, num_warps=w, num_stages=s)
                 for bp, w in ((64, 4), (128, 4), (128, 8), (256, 8)) for s in (2, 3)]
CONV_CONFIGS = [triton.Config({"BLOCK_P": 256}, num_warps=8, num_stages=2)] if _INTERPRET else _CONV_CONFIGS

_APPLY_CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((1024, 4), (2048, 8), (4096, 8))]
APPLY_CONFIGS = [triton.Config({"BLOCK": 4096}, num_warps=8)] if _INTERPRET else _APPLY_CONFIGS


@triton.autotune(configs=CONV_CONFIGS, key=["C_in", "C_out", "OH", "OW"])
@triton.jit
def conv_sigmoid_stats_kernel(x_ptr, w_ptr, cb_ptr, bias_ptr, scale_ptr, y_ptr, pmean_ptr, pm2_ptr,
                              C_in, C_out, OH, OW,
                              sxn, sxc, sxh, sxw,
                              KS: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_CO: tl.constexpr,
                              BLOCK_P: tl.constexpr):
    pid_p = tl.program_id(0)
    n = tl.program_id(1).to(tl.int64)
    n_pb = tl.num_programs(0)
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
    out_mask = pmask[:, None] & comask[None, :]
    y_off = (n * C_out + co[None, :]) * P + offs_p[:, None]
    tl.store(y_ptr + y_off, y, mask=out_mask)
    # per-channel statistics of this tile (mean and centred M2 over its valid pixels)
    cnt = tl.minimum(P - pid_p.to(tl.int64) * BLOCK_P, BLOCK_P).to(tl.float32)
    ym = tl.where(pmask[:, None], y, 0.0)
    t_mean = tl.sum(ym, axis=0) / cnt
    d = tl.where(pmask[:, None], y - t_mean[None, :], 0.0)
    t_m2 = tl.sum(d * d, axis=0)
    s_off = (n * n_pb + pid_p) * C_out + co
    tl.store(pmean_ptr + s_off, t_mean, mask=comask)
    tl.store(pm2_ptr + s_off, t_m2, mask=comask)


@triton.jit
def groupnorm_finalize_kernel(pmean_ptr, pm2_ptr, mean_ptr, rstd_ptr, P, n_pb, G, CPG, C_out, eps,
                              BLOCK_P: tl.constexpr, BLOCK_R: tl.constexpr):
    # one program per (n, group): merge n_pb * CPG (count, mean, M2) partials with Chan's formula
    pid = tl.program_id(0).to(tl.int64)
    n = pid // G
    g = pid % G
    R = n_pb * CPG
    sum_cm = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for start in range(0, R, BLOCK_R):
        j = start + tl.arange(0, BLOCK_R)
        m = j < R
        pb = j // CPG
        idx = (n * n_pb + pb) * C_out + g * CPG + j % CPG
        cnt = tl.where(m, tl.minimum(P - pb * BLOCK_P, BLOCK_P).to(tl.float32), 0.0)
        mu = tl.load(pmean_ptr + idx, mask=m, other=0.0)
        sum_cm += cnt * mu
    total = (P * CPG).to(tl.float32)
    gmean = tl.sum(sum_cm, axis=0) / total
    acc_m2 = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for start in range(0, R, BLOCK_R):
        j = start + tl.arange(0, BLOCK_R)
        m = j < R
        pb = j // CPG
        idx = (n * n_pb + pb) * C_out + g * CPG + j % CPG
        cnt = tl.where(m, tl.minimum(P - pb * BLOCK_P, BLOCK_P).to(tl.float32), 0.0)
        mu = tl.load(pmean_ptr + idx, mask=m, other=0.0)
        m2 = tl.load(pm2_ptr + idx, mask=m, other=0.0)
        dm = mu - gmean
        acc_m2 += m2 + cnt * dm * dm
    var = tl.sum(acc_m2, axis=0) / total
    tl.store(mean_ptr + pid, gmean)
    tl.store(rstd_ptr + pid, 1.0 / tl.sqrt(var + eps))


@triton.autotune(configs=APPLY_CONFIGS, key=["P"])
@triton.jit
def groupnorm_apply_kernel(y_ptr, mean_ptr, rstd_ptr, gamma_ptr, beta_ptr, out_ptr, P, C_out, CPG,
                           BLOCK: tl.constexpr):
    nc = tl.program_id(0).to(tl.int64)  # n * C_out + c
    pid_p = tl.program_id(1)
    c = nc % C_out
    grp = (nc // C_out) * (C_out // CPG) + c // CPG
    mean = tl.load(mean_ptr + grp)
    rstd = tl.load(rstd_ptr + grp)
    a = rstd * tl.load(gamma_ptr + c).to(tl.float32)
    b = tl.load(beta_ptr + c).to(tl.float32) - mean * a
    offs = pid_p.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = offs < P
    v = tl.load(y_ptr + nc * P + offs, mask=m, other=0.0)
    tl.store(out_ptr + nc * P + offs, (v * a + b).to(out_ptr.dtype.element_ty), mask=m)


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
        dev = x.device
        out = torch.empty((N, C_out, OH, OW), dtype=x.dtype, device=dev)
        if out.numel() == 0:
            return out
        y = torch.empty((N, C_out, OH, OW), dtype=torch.float32, device=dev)
        min_bp = min(c.kwargs["BLOCK_P"] for c in conv_sigmoid_stats_kernel.configs)
        max_pb = triton.cdiv(P, min_bp)
        # partial stats, sized for the smallest BLOCK_P (enough for any config the autotuner picks)
        pmean = torch.empty((N * max_pb * C_out,), dtype=torch.float32, device=dev)
        pm2 = torch.empty((N * max_pb * C_out,), dtype=torch.float32, device=dev)
        BLOCK_K = max(16, triton.next_power_of_2(C_in * KS))
        BLOCK_CO = max(16, triton.next_power_of_2(C_out))
        grid = lambda meta: (triton.cdiv(P, meta["BLOCK_P"]), N)
        conv_sigmoid_stats_kernel[grid](
            x, w, self.conv.bias, self.bias, self.scale, y, pmean, pm2, C_in, C_out, OH, OW,
            x.stride(0), x.stride(1), x.stride(2), x.stride(3),
            KS=KS, BLOCK_K=BLOCK_K, BLOCK_CO=BLOCK_CO)
        block_p = conv_sigmoid_stats_kernel.best_config.kwargs["BLOCK_P"]
        n_pb = triton.cdiv(P, block_p)
        mean = torch.empty((N * G,), dtype=torch.float32, device=dev)
        rstd = torch.empty((N * G,), dtype=torch.float32, device=dev)
        BLOCK_R = min(4096, max(16, triton.next_power_of_2(n_pb * CPG)))
        groupnorm_finalize_kernel[(N * G,)](pmean, pm2, mean, rstd, P, n_pb, G, CPG, C_out,
                                            self.group_norm.eps, BLOCK_P=block_p, BLOCK_R=BLOCK_R)
        agrid = lambda meta: (N * C_out, triton.cdiv(P, meta["BLOCK"]))
        groupnorm_apply_kernel[agrid](y, mean, rstd, self.group_norm.weight, self.group_norm.bias, out,
                                      P, C_out, CPG)
        return out
