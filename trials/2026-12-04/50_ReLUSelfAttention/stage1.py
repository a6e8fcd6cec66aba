"""stage1.py of 50_ReLUSelfAttention: Stage 1: a direct, correct translation (masks on every load/store,
triton.cdiv grids, power-of-2 blocks, fp32 accumulation, int64 offsets).

Direct translation of Model.forward, three kernels, one per step of the reference:
  1. linear_kernel:   qkv = x @ c_attn.weight^T + c_attn.bias                (B*T, 3C)
  2. scores_kernel:   att[b,h,i,j] = relu(q_i . k_j / sqrt(hs)) if j <= i else 0  (materialized, B*nh*T*T)
  3. att_v_kernel:    y[b,i,h*hs:(h+1)*hs] = sum_j att[b,h,i,j] v_j          (written straight into (B,T,C))
The causal mask is the tril buffer, so it is computed from indices (j <= i); masked_fill(-inf) followed by
relu gives exactly 0 there. c_proj is defined by the Model but never used by forward: kept for the state_dict.
fp32 dots use input_precision="ieee" (the reference runs a plain fp32 matmul, TF32 not accepted).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import math
import triton
import triton.language as tl


@triton.jit
def linear_kernel(x_ptr, w_ptr, b_ptr, out_ptr, M, N, K,
                  stride_xm, stride_xk, stride_wn, stride_wk, stride_om, stride_on,
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
        w = tl.load(w_ptr + offs_n[None, :] * stride_wn + offs_k[:, None] * stride_wk,
                    mask=mask_n[None, :] & mask_k[:, None], other=0.0).to(tl.float32)
        acc = tl.dot(a, w, acc, input_precision="ieee")
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc += bias[None, :]
    tl.store(out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
             acc.to(out_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


@triton.jit
def scores_kernel(qkv_ptr, att_ptr, T, C, NH, HS, scale,
                  stride_qb, stride_qt, stride_ab, stride_ah, stride_ai,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_bh = tl.program_id(0).to(tl.int64)
    pid_m = tl.program_id(1).to(tl.int64)
    pid_n = tl.program_id(2).to(tl.int64)
    b = pid_bh // NH
    h = pid_bh % NH
    offs_i = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_j = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    mask_i = offs_i < T
    mask_j = offs_j < T
    mask_d = offs_d < HS
    base = qkv_ptr + b * stride_qb + h * HS
    q = tl.load(base + offs_i[:, None] * stride_qt + offs_d[None, :],
                mask=mask_i[:, None] & mask_d[None, :], other=0.0).to(tl.float32)
    kt = tl.load(base + C + offs_j[None, :] * stride_qt + offs_d[:, None],
                 mask=mask_j[None, :] & mask_d[:, None], other=0.0).to(tl.float32)
    s = tl.dot(q, kt, input_precision="ieee") * scale
    causal = offs_j[None, :] <= offs_i[:, None]
    s = tl.where(causal, tl.maximum(s, 0.0), 0.0)
    tl.store(att_ptr + b * stride_ab + h * stride_ah + offs_i[:, None] * stride_ai + offs_j[None, :],
             s, mask=mask_i[:, None] & mask_j[None, :])


@triton.jit
def att_v_kernel(att_ptr, qkv_ptr, y_ptr, T, C, NH, HS,
                 stride_ab, stride_ah, stride_ai, stride_qb, stride_qt, stride_yb, stride_yt,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_bh = tl.program_id(0).to(tl.int64)
    pid_m = tl.program_id(1).to(tl.int64)
    b = pid_bh // NH
    h = pid_bh % NH
    offs_i = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    mask_i = offs_i < T
    mask_d = offs_d < HS
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    for j0 in range(0, T, BLOCK_N):
        offs_j = j0 + tl.arange(0, BLOCK_N)
        mask_j = offs_j < T
        a = tl.load(att_ptr + b * stride_ab + h * stride_ah + offs_i[:, None] * stride_ai + offs_j[None, :],
                    mask=mask_i[:, None] & mask_j[None, :], other=0.0)
        v = tl.load(qkv_ptr + b * stride_qb + 2 * C + h * HS + offs_j[:, None] * stride_qt + offs_d[None, :],
                    mask=mask_j[:, None] & mask_d[None, :], other=0.0).to(tl.float32)
        acc = tl.dot(a, v, acc, input_precision="ieee")
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
        x2 = x.contiguous().view(B * T, C)
        w = self.c_attn.weight
        bvec = self.c_attn.bias
        M, N = B * T, 3 * C
        qkv = torch.empty((M, N), dtype=torch.float32, device=x.device)
        BM, BN, BK = 32, 64, 32
        linear_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](
            x2, w, bvec, qkv, M, N, C,
            x2.stride(0), x2.stride(1), w.stride(0), w.stride(1), qkv.stride(0), qkv.stride(1),
            BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
        qkv3 = qkv.view(B, T, N)
        att = torch.empty((B, NH, T, T), dtype=torch.float32, device=x.device)
        BD = max(16, triton.next_power_of_2(HS))
        SM, SN = 32, 32
        scale = 1.0 / math.sqrt(HS)
        scores_kernel[(B * NH, triton.cdiv(T, SM), triton.cdiv(T, SN))](
            qkv3, att, T, C, NH, HS, scale,
            qkv3.stride(0), qkv3.stride(1), att.stride(0), att.stride(1), att.stride(2),
            BLOCK_M=SM, BLOCK_N=SN, BLOCK_D=BD)
        att_v_kernel[(B * NH, triton.cdiv(T, SM))](
            att, qkv3, y, T, C, NH, HS,
            att.stride(0), att.stride(1), att.stride(2), qkv3.stride(0), qkv3.stride(1),
            y.stride(0), y.stride(1),
            BLOCK_M=SM, BLOCK_N=SN, BLOCK_D=BD)
        return y
