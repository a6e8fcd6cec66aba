"""stage1.py of 47_NetVladNoGhostClusters: Stage 1: a direct, correct translation (masks on every load/store, triton.cdiv grids, power-of-2 blocks, fp32 accumulation, int64 offsets).

Guide: the skill's references/stage1-naive.md (MCP resource p2t://references/stage1-naive.md).
Write the kernel(s) below, launch them from ModelNew.forward, then run_validation.
Replace the scaffold's example kernel; keep ModelNew's constructor as it is (the validator loads
the reference's weights into it when the parameter names match).
"""

import math
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch as th
import triton
import triton.language as tl


# ---------------------------------------------------------------------------------------------
# Stage 1: a direct translation, one kernel per step of the reference.
#   1. logits[M, C] = x[M, D] @ clusters[D, C]              (M = B*N, C = K + G)
#   2. per-column batch statistics of logits (training-mode BatchNorm1d), running-stat update
#   3. BatchNorm affine + softmax over C, keep the first K columns -> assign[M, K]
#   4. vlad[b, d, k] = sum_n assign[b, n, k] * x[b, n, d] - (sum_n assign[b, n, k]) * clusters2[d, k]
#   5. intra L2-normalize over d for each (b, k), then L2-normalize the flattened D*K row.
# ---------------------------------------------------------------------------------------------


@triton.jit
def logits_kernel(x_ptr, w_ptr, out_ptr, M, C, D,
                  stride_xm, stride_xd, stride_wd, stride_wc, stride_om,
                  BLOCK_M: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_C)
    rmask = rows < M
    cmask = cols < C
    acc = tl.zeros((BLOCK_M, BLOCK_C), dtype=tl.float32)
    for d0 in range(0, D, BLOCK_D):
        ds = d0 + tl.arange(0, BLOCK_D)
        dmask = ds < D
        xt = tl.load(x_ptr + rows[:, None] * stride_xm + ds[None, :] * stride_xd,
                     mask=rmask[:, None] & dmask[None, :], other=0.0).to(tl.float32)
        wt = tl.load(w_ptr + ds[:, None] * stride_wd + cols[None, :] * stride_wc,
                     mask=dmask[:, None] & cmask[None, :], other=0.0).to(tl.float32)
        acc = tl.dot(xt, wt, acc, input_precision="ieee")
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], acc,
             mask=rmask[:, None] & cmask[None, :])


@triton.jit
def bn_stats_kernel(logits_ptr, mean_ptr, var_ptr, rmean_ptr, rvar_ptr, nbt_ptr,
                    M, C, stride_lm, momentum,
                    UPDATE_RUNNING: tl.constexpr, CUMULATIVE: tl.constexpr, BLOCK_M: tl.constexpr):
    # one program per column c: two passes (mean, then centred sum of squares)
    c = tl.program_id(0)
    offs = tl.arange(0, BLOCK_M)
    s = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        rows = (m0 + offs).to(tl.int64)
        v = tl.load(logits_ptr + rows * stride_lm + c, mask=rows < M, other=0.0)
        s += v
    mean = tl.sum(s, axis=0) / M
    q = tl.zeros((BLOCK_M,), dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        rows = (m0 + offs).to(tl.int64)
        v = tl.load(logits_ptr + rows * stride_lm + c, mask=rows < M, other=0.0)
        dv = tl.where(rows < M, v - mean, 0.0)
        q += dv * dv
    ss = tl.sum(q, axis=0)
    var = ss / M
    tl.store(mean_ptr + c, mean)
    tl.store(var_ptr + c, var)
    if UPDATE_RUNNING:
        if CUMULATIVE:
            f = 1.0 / (tl.load(nbt_ptr).to(tl.float32) + 1.0)
        else:
            f = momentum
        unbiased = ss / tl.maximum(M - 1, 1)
        rm = tl.load(rmean_ptr + c)
        rv = tl.load(rvar_ptr + c)
        tl.store(rmean_ptr + c, (1.0 - f) * rm + f * mean)
        tl.store(rvar_ptr + c, (1.0 - f) * rv + f * unbiased)


@triton.jit
def bn_softmax_kernel(logits_ptr, mean_ptr, var_ptr, gamma_ptr, beta_ptr, assign_ptr, nbt_ptr,
                      M, C, K, stride_lm, stride_am, eps,
                      BUMP_NBT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    if BUMP_NBT:
        # num_batches_tracked += 1 (after bn_stats_kernel has read it: a later launch on the stream)
        if pid == 0:
            tl.store(nbt_ptr, tl.load(nbt_ptr) + 1)
    rows = pid.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_C)
    rmask = rows < M
    cmask = cols < C
    z = tl.load(logits_ptr + rows[:, None] * stride_lm + cols[None, :],
                mask=rmask[:, None] & cmask[None, :], other=0.0)
    mean = tl.load(mean_ptr + cols, mask=cmask, other=0.0)
    var = tl.load(var_ptr + cols, mask=cmask, other=1.0)
    g = tl.load(gamma_ptr + cols, mask=cmask, other=1.0)
    bt = tl.load(beta_ptr + cols, mask=cmask, other=0.0)
    y = (z - mean[None, :]) / tl.sqrt(var[None, :] + eps) * g[None, :] + bt[None, :]
    y = tl.where(cmask[None, :], y, -float("inf"))
    mx = tl.max(y, axis=1)
    e = tl.exp(y - mx[:, None])
    p = e / tl.sum(e, axis=1)[:, None]
    tl.store(assign_ptr + rows[:, None] * stride_am + cols[None, :], p,
             mask=rmask[:, None] & (cols[None, :] < K))


@triton.jit
def vlad_kernel(x_ptr, assign_ptr, c2_ptr, vlad_ptr, Nf, D, K,
                stride_xb, stride_xn, stride_xd, stride_ab, stride_an,
                stride_cd, stride_ck, stride_vb, stride_vd,
                BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_K: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    pd = tl.program_id(1)
    ds = pd * BLOCK_D + tl.arange(0, BLOCK_D)
    ks = tl.arange(0, BLOCK_K)
    dmask = ds < D
    kmask = ks < K
    acc = tl.zeros((BLOCK_D, BLOCK_K), dtype=tl.float32)
    asum = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for n0 in range(0, Nf, BLOCK_N):
        ns = n0 + tl.arange(0, BLOCK_N)
        nmask = ns < Nf
        xt = tl.load(x_ptr + b * stride_xb + ns[:, None] * stride_xn + ds[None, :] * stride_xd,
                     mask=nmask[:, None] & dmask[None, :], other=0.0).to(tl.float32)
        at = tl.load(assign_ptr + b * stride_ab + ns[:, None] * stride_an + ks[None, :],
                     mask=nmask[:, None] & kmask[None, :], other=0.0)
        acc = tl.dot(tl.trans(xt), at, acc, input_precision="ieee")
        asum += tl.sum(at, axis=0)
    c2 = tl.load(c2_ptr + ds[:, None] * stride_cd + ks[None, :] * stride_ck,
                 mask=dmask[:, None] & kmask[None, :], other=0.0)
    v = acc - asum[None, :] * c2
    tl.store(vlad_ptr + b * stride_vb + ds[:, None] * stride_vd + ks[None, :], v,
             mask=dmask[:, None] & kmask[None, :])


@triton.jit
def normalize_kernel(vlad_ptr, out_ptr, D, K, stride_vb, stride_vd, stride_ob,
                     BLOCK_D: tl.constexpr, BLOCK_K: tl.constexpr):
    # one program per batch row: the whole D x K block
    b = tl.program_id(0).to(tl.int64)
    ds = tl.arange(0, BLOCK_D)
    ks = tl.arange(0, BLOCK_K)
    m = (ds[:, None] < D) & (ks[None, :] < K)
    v = tl.load(vlad_ptr + b * stride_vb + ds[:, None] * stride_vd + ks[None, :], mask=m, other=0.0)
    colnorm = tl.sqrt(tl.sum(v * v, axis=0))                 # over d, per k
    v = v / tl.maximum(colnorm, 1e-12)[None, :]
    total = tl.sqrt(tl.sum(tl.sum(v * v, axis=1), axis=0))
    v = v / tl.maximum(total, 1e-12)
    tl.store(out_ptr + b * stride_ob + ds[:, None] * K + ks[None, :], v, mask=m)


class ModelNew(nn.Module):
    def __init__(self, cluster_size, feature_size, ghost_clusters):
        # Model's constructor, copied: the same parameter names let the validator load its weights.
        super().__init__()

        self.feature_size = feature_size
        self.cluster_size = cluster_size
        self.ghost_clusters = ghost_clusters

        init_sc = (1 / math.sqrt(feature_size))
        clusters = cluster_size + ghost_clusters

        # The `clusters` weights are the `(w,b)` in the paper
        self.clusters = nn.Parameter(init_sc * th.randn(feature_size, clusters))
        self.batch_norm = nn.BatchNorm1d(clusters)
        # The `clusters2` weights are the visual words `c_k` in the paper
        self.clusters2 = nn.Parameter(init_sc * th.randn(1, feature_size, cluster_size))
        self.out_dim = self.cluster_size * feature_size

    def forward(self, x, mask=None):
        B, Nf, D = x.shape
        assert D == self.feature_size
        if x.device != self.clusters.device:
            raise ValueError(f"x.device {x.device} != cluster.device {self.clusters.device}")
        K = self.cluster_size
        C = self.cluster_size + self.ghost_clusters
        M = B * Nf
        out = torch.empty((B, D * K), device=x.device, dtype=torch.float32)
        if B == 0:
            return out
        x = x.contiguous()
        x2 = x.view(M, D)
        w = self.clusters
        dev = x.device
        BLOCK_C = max(16, triton.next_power_of_2(C))
        BLOCK_K = max(16, triton.next_power_of_2(K))

        logits = torch.empty((M, C), device=dev, dtype=torch.float32)
        BM = 32
        logits_kernel[(triton.cdiv(M, BM),)](
            x2, w, logits, M, C, D, x2.stride(0), x2.stride(1), w.stride(0), w.stride(1),
            logits.stride(0), BLOCK_M=BM, BLOCK_C=BLOCK_C, BLOCK_D=32)

        bn = self.batch_norm
        use_batch_stats = bn.training or bn.running_mean is None
        update_running = bn.training and bn.track_running_stats and bn.running_mean is not None
        if use_batch_stats:
            if M <= 1:
                raise ValueError("Expected more than 1 value per channel when training")
            mean = torch.empty((C,), device=dev, dtype=torch.float32)
            var = torch.empty((C,), device=dev, dtype=torch.float32)
            rm = bn.running_mean if update_running else mean
            rv = bn.running_var if update_running else var
            nbt = bn.num_batches_tracked if update_running else mean
            bn_stats_kernel[(C,)](
                logits, mean, var, rm, rv, nbt, M, C, logits.stride(0),
                float(bn.momentum) if bn.momentum is not None else 0.0,
                UPDATE_RUNNING=update_running, CUMULATIVE=bn.momentum is None, BLOCK_M=1024)
        else:
            mean, var = bn.running_mean, bn.running_var
            nbt = mean

        assign = torch.empty((M, K), device=dev, dtype=torch.float32)
        BR = 32
        bn_softmax_kernel[(triton.cdiv(M, BR),)](
            logits, mean, var, bn.weight, bn.bias, assign, nbt,
            M, C, K, logits.stride(0), assign.stride(0), float(bn.eps),
            BUMP_NBT=update_running, BLOCK_M=BR, BLOCK_C=BLOCK_C)

        vlad = torch.empty((B, D, K), device=dev, dtype=torch.float32)
        c2 = self.clusters2[0]
        BD = 64
        vlad_kernel[(B, triton.cdiv(D, BD))](
            x, assign, c2, vlad, Nf, D, K,
            x.stride(0), x.stride(1), x.stride(2), Nf * assign.stride(0), assign.stride(0),
            c2.stride(0), c2.stride(1), vlad.stride(0), vlad.stride(1),
            BLOCK_N=32, BLOCK_D=BD, BLOCK_K=BLOCK_K)

        normalize_kernel[(B,)](
            vlad, out, D, K, vlad.stride(0), vlad.stride(1), out.stride(0),
            BLOCK_D=triton.next_power_of_2(D), BLOCK_K=BLOCK_K)
        return out
