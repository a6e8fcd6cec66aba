"""stage3.py of 47_NetVladNoGhostClusters: Stage 3: advanced.

Two passes over x, the minimum for training-mode BatchNorm (its batch statistics over all B*N rows are
needed before any softmax can be taken):
  pass 1  logits_stats_kernel: logits = x @ clusters plus per-128-row partial statistics (sum, centred M2)
          in the matmul epilogue; bn_finalize_kernel combines them (Chan) into a per-cluster scale/shift
          with log2(e) folded in, and updates running_mean / running_var / num_batches_tracked.
  pass 2  netvlad_kernel, one program per batch row: BatchNorm + softmax on the fly from the logits
          (exp2, no assignment tensor in HBM: stage 2 wrote and re-read a B*N x K assignment), the
          aggregation sum_n a[n,k] x[n,d] as tl.dot with the whole D x K block on chip, the residual
          against clusters2, the intra L2 norm over D and the global L2 norm, one store of the output.
          The N loop is software-pipelined (tl.range num_stages) so x tiles stream under the dots.
HBM traffic: x twice + logits (K+G columns) twice + output once; no other intermediate.
tl.dot runs input_precision="ieee": the reference's matmuls are exact fp32 (allow_tf32 off).
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
    LOG2E: tl.constexpr = 1.4426950408889634
    sc = g / tl.sqrt(var + eps)
    # stored pre-multiplied by log2(e): softmax(y) = exp2(y*log2e - max) / sum
    tl.store(scale_ptr + cols, sc * LOG2E, mask=cmask)
    tl.store(shift_ptr + cols, (bt - mean * sc) * LOG2E, mask=cmask)


_VLAD_CONFIGS = _pick([triton.Config({"BLOCK_N": bn, "STAGES": st}, num_warps=w)
                       for bn in (16, 32) for w in (4, 8) for st in (2, 3)])


@triton.autotune(configs=_VLAD_CONFIGS, key=["Nf", "D", "C", "K"])
@triton.jit
def netvlad_kernel(x_ptr, logits_ptr, scale_ptr, shift_ptr, c2_ptr, out_ptr, Nf, D, C, K,
                   stride_xb, stride_xn, stride_xd, stride_lm,
                   stride_cd, stride_ck, stride_ob,
                   BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_C: tl.constexpr,
                   STAGES: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    ds = tl.arange(0, BLOCK_D)
    cs = tl.arange(0, BLOCK_C)
    dmask = ds < D
    cmask = cs < C
    kmask = cs < K
    # BatchNorm folded to y * log2(e) = z * scale + shift (finalize kernel); padded columns -> -inf
    sc = tl.load(scale_ptr + cs, mask=cmask, other=0.0)
    sh = tl.load(shift_ptr + cs, mask=cmask, other=-float("inf"))
    acc = tl.zeros((BLOCK_D, BLOCK_C), dtype=tl.float32)
    asum = tl.zeros((BLOCK_C,), dtype=tl.float32)
    row0 = b * Nf
    for n0 in tl.range(0, Nf, BLOCK_N, num_stages=STAGES):
        ns = n0 + tl.arange(0, BLOCK_N)
        nmask = ns < Nf
        z = tl.load(logits_ptr + (row0 + ns)[:, None] * stride_lm + cs[None, :],
                    mask=nmask[:, None] & cmask[None, :], other=0.0)
        y = z * sc[None, :] + sh[None, :]
        e = tl.exp2(y - tl.max(y, axis=1)[:, None])
        p = e / tl.sum(e, axis=1)[:, None]
        p = tl.where(nmask[:, None] & kmask[None, :], p, 0.0)   # padded rows, ghost and padded clusters
        xt = tl.load(x_ptr + b * stride_xb + ns[:, None] * stride_xn + ds[None, :] * stride_xd,
                     mask=nmask[:, None] & dmask[None, :], other=0.0).to(tl.float32)
        acc = tl.dot(tl.trans(xt), p, acc, input_precision="ieee")
        asum += tl.sum(p, axis=0)
    m = dmask[:, None] & kmask[None, :]
    c2 = tl.load(c2_ptr + ds[:, None] * stride_cd + cs[None, :] * stride_ck, mask=m, other=0.0)
    v = acc - asum[None, :] * c2
    colnorm = tl.sqrt(tl.sum(v * v, axis=0))
    v = v / tl.maximum(colnorm, 1e-12)[None, :]
    total = tl.sqrt(tl.sum(tl.sum(v * v, axis=1), axis=0))
    v = v / tl.maximum(total, 1e-12)
    tl.store(out_ptr + b * stride_ob + ds[:, None] * K + cs[None, :], v, mask=m)


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

        bn = self.batch_norm
        use_batch = bn.training or bn.running_mean is None
        update_running = bn.training and bn.track_running_stats and bn.running_mean is not None
        if use_batch and M <= 1:
            raise ValueError("Expected more than 1 value per channel when training")

        # pass 1: logits + partial statistics
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

        # pass 2: softmax + aggregation + both L2 norms, one program per batch row
        c2 = self.clusters2[0]
        netvlad_kernel[(B,)](
            x, logits, scale, shift, c2, out, Nf, D, C, K,
            x.stride(0), x.stride(1), x.stride(2), logits.stride(0),
            c2.stride(0), c2.stride(1), out.stride(0),
            BLOCK_D=triton.next_power_of_2(D), BLOCK_C=BLOCK_C)
        return out
