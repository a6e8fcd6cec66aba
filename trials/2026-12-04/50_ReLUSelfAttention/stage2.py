"""stage2.py of 50_ReLUSelfAttention: Stage 2: basic optimization (coalesced access, @triton.autotune keyed on
the sizes, num_warps matched to the block, fewer intermediates).

Changes from stage 1:
  - linear_kernel reads x through its (B, T, C) strides (no .contiguous() copy) and loads W as [N, K] tiles
    with K (the contiguous dim) last, transposed in registers for tl.dot; autotuned on (M, N, K).
  - scores_kernel + att_v_kernel fused into attn_kernel: the (B, nh, T, T) att intermediate is gone
    (ReLU is elementwise, so no online statistics are needed), K is loaded [BLOCK_N, hs] with hs last.
  - causal block skipping: the key loop stops at the query block's diagonal (about half the work).
fp32 dots stay input_precision="ieee" (no TF32 accepted by the task).
"""

import os
import torch
import torch.nn as nn
import torch.nn.functional as F
import math
import triton
import triton.language as tl

_INTERP = os.environ.get("TRITON_INTERPRET") == "1"

_LIN_CONFIGS = [
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=w, num_stages=s)
    for (bm, bn, bk, w, s) in [(128, 128, 32, 8, 3), (128, 64, 32, 4, 3), (64, 128, 32, 4, 3),
                               (64, 64, 32, 4, 4), (128, 128, 64, 8, 2)]
]
LIN_CONFIGS = [triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4)] if _INTERP else _LIN_CONFIGS

_ATT_CONFIGS = [
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
    for (bm, bn, w, s) in [(128, 64, 8, 2), (64, 64, 4, 2), (128, 32, 4, 3), (64, 32, 4, 3)]
]
ATT_CONFIGS = [triton.Config({"BLOCK_M": 64, "BLOCK_N": 64}, num_warps=4)] if _INTERP else _ATT_CONFIGS


@triton.autotune(configs=LIN_CONFIGS, key=["M", "N", "K"])
@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K, T,
                  stride_xb, stride_xt, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = offs_m < M
    mask_n = offs_n < N
    row_off = (offs_m // T) * stride_xb + (offs_m % T) * stride_xt
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        mask_k = offs_k < K
        a = tl.load(x_ptr + row_off[:, None] + offs_k[None, :] * stride_xk,
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs_n[:, None] * stride_wn + offs_k[None, :] * stride_wk,
                    mask=mask_n[:, None] & mask_k[None, :], other=0.0).to(tl.float32)
        acc = tl.dot(a, tl.trans(w), acc, input_precision="ieee")
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc += bias[None, :]
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
             acc.to(out_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@triton.autotune(configs=ATT_CONFIGS, key=["T", "HS"])
@triton.jit
def attn_kernel(qkv_ptr, y_ptr, T, C, NH, HS, scale,
                stride_qb, stride_qt, stride_yb, stride_yt,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_bh = tl.program_id(1).to(tl.int64)
    b = pid_bh // NH
    h = pid_bh % NH
    offs_i = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    mask_i = offs_i < T
    mask_d = offs_d < HS
    base = qkv_ptr + b * stride_qb + h * HS
    q = tl.load(base + offs_i[:, None] * stride_qt + offs_d[None, :],
                mask=mask_i[:, None] & mask_d[None, :], other=0.0).to(tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    hi = tl.minimum((pid_m + 1) * BLOCK_M, T)  # causal: keys past the block's last query are all masked
    for j0 in range(0, hi, BLOCK_N):
        offs_j = j0 + tl.arange(0, BLOCK_N)
        mask_j = offs_j < hi
        kv_mask = mask_j[:, None] & mask_d[None, :]
        k = tl.load(base + C + offs_j[:, None] * stride_qt + offs_d[None, :], mask=kv_mask, other=0.0).to(tl.float32)
        v = tl.load(base + 2 * C + offs_j[:, None] * stride_qt + offs_d[None, :], mask=kv_mask, other=0.0).to(tl.float32)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        causal = (offs_j[None, :] <= offs_i[:, None]) & mask_j[None, :]
        p = tl.where(causal, tl.maximum(s, 0.0), 0.0)
        acc = tl.dot(p, v, acc, input_precision="ieee")
    tl.store(y_ptr + b * stride_yb + offs_i[:, None] * stride_yt + h * HS + offs_d[None, :],
             acc.to(y_ptr.dtype.element_ty), mask=mask_i[:, None] & mask_d[None, :])


class ModelNew(nn.Module):
    def __init__(self, n_embd, n_head, max_seqlen):
        # Model's constructor, copied: the same parameter names let the validator load its weights.
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)  # unused by forward, as in Model
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen))
                                     .view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        NH = self.n_head
        HS = C // NH
        y = torch.empty((B, T, C), dtype=x.dtype, device=x.device)
        if B == 0 or T == 0 or C == 0:
            return y
        w = self.c_attn.weight
        bvec = self.c_attn.bias
        M, N = B * T, 3 * C
        qkv = torch.empty((B, T, N), dtype=torch.float32, device=x.device)
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))
        linear_kernel[grid](x, w, bvec, qkv, M, N, C, T,
                            x.stride(0), x.stride(1), x.stride(2), w.stride(0), w.stride(1),
                            qkv.stride(1), qkv.stride(2))
        BD = max(16, triton.next_power_of_2(HS))
        scale = 1.0 / math.sqrt(HS)
        agrid = lambda meta: (triton.cdiv(T, meta["BLOCK_M"]), B * NH)
        attn_kernel[agrid](qkv, y, T, C, NH, HS, scale,
                           qkv.stride(0), qkv.stride(1), y.stride(0), y.stride(1),
                           BLOCK_D=BD)
        return y
