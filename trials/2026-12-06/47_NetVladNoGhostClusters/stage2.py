"""stage2.py of 47_NetVladNoGhostClusters: Stage 2: basic optimization.

Same algorithm as stage 1 with fewer HBM round trips and autotuned blocks:
  1. logits_stats_kernel: logits = x @ clusters AND per-128-row partial column statistics (sum, centred M2)
     in the matmul's epilogue (stage 1 re-read the logits twice for the statistics).
  2. bn_finalize_kernel: one program combines the partials (Chan's parallel variance), folds BatchNorm into
     scale/shift per cluster, updates the running statistics and num_batches_tracked.
  3. bn_softmax_kernel: scale/shift + softmax over K+G, ROWS rows per program, keeps the first K columns.
  4. vlad_norm_kernel: one program per batch row holds the whole D x K VLAD block on chip: the aggregation
     (assign read once, not once per D block), the residual, the intra L2 norm and the global L2 norm; the
     output is written once (stage 1 wrote and re-read a B x D x K intermediate).
"""

import math
import os
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch as th
import triton
import triton.language as tl

_INTERP = os.environ.get("TRITON_INTERPRET") == "1"


def _pick(configs):
    return configs[-1:] if _INTERP else configs  # the interpreter cannot time configs


PART_M = 128  # rows per partial-statistics block (fixed: the finalize kernel must know it)

_LOGITS_CONFIGS = _pick([triton.Config({"BLOCK_D": bd}, num_warps=w, num_stages=s)
                         for bd in (32, 64) for w in (4, 8) for s in (2, 3)])


@triton.autotune(configs=_LOGITS_CONFIGS, key=["M", "C", "D"])
@triton.jit
def logits_stats_kernel(x_ptr, w_ptr, out_ptr, psum_ptr, pm2_ptr, M, C, D,
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
    m2d = rmask[:, None] & cmask[None, :]
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :], acc, mask=m2d)
    # partial statistics of this block's valid rows (padded rows are exact zeros: masked loads)
    cnt = tl.minimum(M - pid.to(tl.int64) * BLOCK_M, BLOCK_M).to(tl.float32)
    s = tl.sum(acc, axis=0)
    mb = s / cnt
    dv = tl.where(m2d, acc - mb[None, :], 0.0)
    m2 = tl.sum(dv * dv, axis=0)
    tl.store(psum_ptr + pid * BLOCK_C + cols, s)
    tl.store(pm2_ptr + pid * BLOCK_C + cols, m2)


@triton.jit
def bn_finalize_kernel(psum_ptr, pm2_ptr, gamma_ptr, beta_ptr, rmean_ptr, rvar_ptr, nbt_ptr,
                       scale_ptr, shift_ptr, M, C, n_parts, momentum, eps,
                       USE_BATCH: tl.constexpr, UPDATE_RUNNING: tl.constexpr, CUMULATIVE: tl.constexpr,
                       PART_ROWS: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    cols = tl.arange(0, BLOCK_C)
    cmask = cols < C
    if USE_BATCH:
        tot = tl.zeros((BLOCK_C,), dtype=tl.float32)
        for p0 in range(0, n_parts, BLOCK_P):
            ps = p0 + tl.arange(0, BLOCK_P)
            v = tl.load(psum_ptr + ps[:, None] * BLOCK_C + cols[None, :], mask=ps[:, None] < n_parts, other=0.0)
            tot += tl.sum(v, axis=0)
        mean = tot / M
        m2 = tl.zeros((BLOCK_C,), dtype=tl.float32)
        for p0 in range(0, n_parts, BLOCK_P):
            ps = p0 + tl.arange(0, BLOCK_P)
            pmask = ps < n_parts
            v = tl.load(psum_ptr + ps[:, None] * BLOCK_C + cols[None, :], mask=pmask[:, None], other=0.0)
            q = tl.load(pm2_ptr + ps[:, None] * BLOCK_C + cols[None, :], mask=pmask[:, None], other=0.0)
            cnt = tl.minimum(M - ps.to(tl.int64) * PART_ROWS, PART_ROWS).to(tl.float32)
            cnt = tl.where(pmask, cnt, 1.0)
            dm = v / cnt[:, None] - mean[None, :]
            m2 += tl.sum(tl.where(pmask[:, None], q + cnt[:, None] * dm * dm, 0.0), axis=0)
        var = m2 / M
        if UPDATE_RUNNING:
            nb = tl.load(nbt_ptr)
            if CUMULATIVE:
                f = 1.0 / (nb.to(tl.float32) + 1.0)
            else:
                f = momentum
            rm = tl.load(rmean_ptr + cols, mask=cmask, other=0.0)
            rv = tl.load(rvar_ptr + cols, mask=cmask, other=0.0)
            tl.store(rmean_ptr + cols, (1.0 - f) * rm + f * mean, mask=cmask)
            tl.store(rvar_ptr + cols, (1.0 - f) * rv + f * (m2 / tl.maximum(M - 1, 1)), mask=cmask)
            tl.store(nbt_ptr, nb + 1)
    else:
        mean = tl.load(rmean_ptr + cols, mask=cmask, other=0.0)
        var = tl.load(rvar_ptr + cols, mask=cmask, other=1.0)
    g = tl.load(gamma_ptr + cols, mask=cmask, other=1.0)
    bt = tl.load(beta_ptr + cols, mask=cmask, other=0.0)
    sc = g / tl.sqrt(var + eps)
    tl.store(scale_ptr + cols, sc, mask=cmask)
    tl.store(shift_ptr + cols, bt - mean * sc, mask=cmask)


_SOFTMAX_CONFIGS = _pick([triton.Config({"ROWS": r}, num_warps=w) for r in (32, 64, 128) for w in (2, 4)])


@triton.autotune(configs=_SOFTMAX_CONFIGS, key=["M", "C", "K"])
@triton.jit
def bn_softmax_kernel(logits_ptr, scale_ptr, shift_ptr, assign_ptr, M, C, K, stride_lm, stride_am,
                      ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_C)
    rmask = rows < M
    cmask = cols < C
    z = tl.load(logits_ptr + rows[:, None] * stride_lm + cols[None, :],
                mask=rmask[:, None] & cmask[None, :], other=0.0)
    sc = tl.load(scale_ptr + cols, mask=cmask, other=0.0)
    sh = tl.load(shift_ptr + cols, mask=cmask, other=0.0)
    y = tl.where(cmask[None, :], z * sc[None, :] + sh[None, :], -float("inf"))
    mx = tl.max(y, axis=1)
    e = tl.exp(y - mx[:, None])
    p = e / tl.sum(e, axis=1)[:, None]
    tl.store(assign_ptr + rows[:, None] * stride_am + cols[None, :], p,
             mask=rmask[:, None] & (cols[None, :] < K))


_VLAD_CONFIGS = _pick([triton.Config({"BLOCK_N": bn}, num_warps=w, num_stages=s)
                       for bn in (16, 32) for w in (4, 8) for s in (2, 3)])


@triton.autotune(configs=_VLAD_CONFIGS, key=["Nf", "D", "K"])
@triton.jit
def vlad_norm_kernel(x_ptr, assign_ptr, c2_ptr, out_ptr, Nf, D, K,
                     stride_xb, stride_xn, stride_xd, stride_ab, stride_an,
                     stride_cd, stride_ck, stride_ob,
                     BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_K: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    ds = tl.arange(0, BLOCK_D)
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
    m = dmask[:, None] & kmask[None, :]
    c2 = tl.load(c2_ptr + ds[:, None] * stride_cd + ks[None, :] * stride_ck, mask=m, other=0.0)
    v = acc - asum[None, :] * c2
    colnorm = tl.sqrt(tl.sum(v * v, axis=0))
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
        if not x.is_contiguous():
            x = x.contiguous()  # the kernels read x as B*N rows of D contiguous floats
        dev = x.device
        w = self.clusters
        BLOCK_C = max(16, triton.next_power_of_2(C))
        BLOCK_K = max(16, triton.next_power_of_2(K))

        bn = self.batch_norm
        use_batch = bn.training or bn.running_mean is None
        update_running = bn.training and bn.track_running_stats and bn.running_mean is not None
        if use_batch and M <= 1:
            raise ValueError("Expected more than 1 value per channel when training")

        logits = torch.empty((M, C), device=dev, dtype=torch.float32)
        n_parts = triton.cdiv(M, PART_M)
        psum = torch.empty((n_parts, BLOCK_C), device=dev, dtype=torch.float32)
        pm2 = torch.empty((n_parts, BLOCK_C), device=dev, dtype=torch.float32)
        logits_stats_kernel[(n_parts,)](
            x, w, logits, psum, pm2, M, C, D, x.stride(1), x.stride(2), w.stride(0), w.stride(1),
            logits.stride(0), BLOCK_M=PART_M, BLOCK_C=BLOCK_C)

        scale = torch.empty((C,), device=dev, dtype=torch.float32)
        shift = torch.empty((C,), device=dev, dtype=torch.float32)
        rm = bn.running_mean if bn.running_mean is not None else scale
        rv = bn.running_var if bn.running_var is not None else scale
        nbt = bn.num_batches_tracked if update_running else scale
        bn_finalize_kernel[(1,)](
            psum, pm2, bn.weight, bn.bias, rm, rv, nbt, scale, shift, M, C, n_parts,
            float(bn.momentum) if bn.momentum is not None else 0.0, float(bn.eps),
            USE_BATCH=use_batch, UPDATE_RUNNING=update_running, CUMULATIVE=bn.momentum is None,
            PART_ROWS=PART_M, BLOCK_P=64, BLOCK_C=BLOCK_C)

        assign = torch.empty((M, K), device=dev, dtype=torch.float32)
        bn_softmax_kernel[lambda meta: (triton.cdiv(M, meta["ROWS"]),)](
            logits, scale, shift, assign, M, C, K, logits.stride(0), assign.stride(0), BLOCK_C=BLOCK_C)

        c2 = self.clusters2[0]
        vlad_norm_kernel[(B,)](
            x, assign, c2, out, Nf, D, K,
            x.stride(0), x.stride(1), x.stride(2), Nf * assign.stride(0), assign.stride(0),
            c2.stride(0), c2.stride(1), out.stride(0),
            BLOCK_D=triton.next_power_of_2(D), BLOCK_K=BLOCK_K)
        return out
