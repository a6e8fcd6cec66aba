"""stage3.py of 50_ReLUSelfAttention: Stage 3: advanced optimization.

Changes from stage 2:
  - precision: the op is compute-bound (~84 GFLOP causal at full size), so the fp32 dots use
    input_precision="tf32x3" (tensor cores, fp32-level accuracy; TF32 is not accepted by the task) instead of
    "ieee" (FP32 FMA, 7x below TF32's peak).
  - QKV projection: 1-D grid with GROUP_M grouped ordering (L2 reuse of W panels), autotuned with num_stages;
    the epilogue fuses the head split: q, k, v are written head-major (3, B, nh, T, hs), each head's K/V a
    contiguous (T, hs) panel, and the 1/sqrt(hs) scale is folded into q (one multiply per q element instead of
    one per score).
  - attention: off-diagonal key blocks run without the causal/bounds mask (j0 + BLOCK_N <= first query), only
    the diagonal blocks are masked; heavy (late) query blocks are launched first for load balance on a
    causal triangle; BLOCK_M is a multiple of BLOCK_N; num_stages pipelining of the K/V loads.
  - larger tiles (128x128 projection, 128x64 attention) for on-chip reuse: each x/W panel and K/V block is
    re-read half as often; under the interpreter the first GPU config runs (it cannot time the others).
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
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, num_warps=w, num_stages=s)
    for (bm, bn, bk, w, s) in [(128, 128, 32, 8, 3), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4),
                               (128, 128, 64, 8, 2), (64, 64, 64, 4, 3)]
]
# the interpreter cannot time configs: it runs the GPU list's first (largest-reuse) config
LIN_CONFIGS = _LIN_CONFIGS[:1] if _INTERP else _LIN_CONFIGS

_ATT_CONFIGS = [
    triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s)
    for (bm, bn, w, s) in [(128, 64, 8, 3), (64, 64, 4, 3), (128, 32, 4, 4), (64, 32, 4, 4), (128, 128, 8, 2)]
]
ATT_CONFIGS = _ATT_CONFIGS[:1] if _INTERP else _ATT_CONFIGS


@triton.autotune(configs=LIN_CONFIGS, key=["M", "N", "K"])
@triton.jit
def qkv_proj_kernel(x_ptr, w_ptr, b_ptr, qkv_ptr, M, N, K, T, NH, HS, scale,
                    stride_xb, stride_xt, stride_xk, stride_wn, stride_wk,
                    stride_o3, stride_ob, stride_oh, stride_ot,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.minimum(num_pid_m - first_pid_m, GROUP_M)
    pid_m = (first_pid_m + ((pid % num_pid_in_group) % group_size_m)).to(tl.int64)
    pid_n = ((pid % num_pid_in_group) // group_size_m).to(tl.int64)

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = offs_m < M
    mask_n = offs_n < N
    bidx = offs_m // T
    tidx = offs_m % T
    x_row = bidx * stride_xb + tidx * stride_xt
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        mask_k = offs_k < K
        a = tl.load(x_ptr + x_row[:, None] + offs_k[None, :] * stride_xk,
                    mask=mask_m[:, None] & mask_k[None, :], other=0.0).to(tl.float32)
        w = tl.load(w_ptr + offs_n[:, None] * stride_wn + offs_k[None, :] * stride_wk,
                    mask=mask_n[:, None] & mask_k[None, :], other=0.0).to(tl.float32)
        acc = tl.dot(a, tl.trans(w), acc, input_precision="tf32x3")
    bias = tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)
    acc += bias[None, :]
    # epilogue: split heads. column n -> (which of q/k/v, head, d); q gets the softmax-free 1/sqrt(hs) scale
    which = offs_n // K
    cin = offs_n % K
    hh = cin // HS
    dd = cin % HS
    acc = tl.where((which == 0)[None, :], acc * scale, acc)
    col_off = which * stride_o3 + hh * stride_oh + dd
    row_off = bidx * stride_ob + tidx * stride_ot
    tl.store(qkv_ptr + row_off[:, None] + col_off[None, :], acc.to(qkv_ptr.dtype.element_ty),
             mask=mask_m[:, None] & mask_n[None, :])


@triton.autotune(configs=ATT_CONFIGS, key=["T", "HS"])
@triton.jit
def relu_attn_kernel(q_ptr, k_ptr, v_ptr, y_ptr, T, NH, HS, stride_hb, stride_ht,
                     stride_yb, stride_yt,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    num_m = tl.cdiv(T, BLOCK_M)
    pid = tl.program_id(0)
    pid_m = (num_m - 1 - pid % num_m).to(tl.int64)  # heaviest (last) query blocks first
    pid_bh = (pid // num_m).to(tl.int64)
    b = pid_bh // NH
    h = pid_bh % NH
    i0 = pid_m * BLOCK_M
    offs_i = i0 + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    offs_n = tl.arange(0, BLOCK_N)
    mask_i = offs_i < T
    mask_d = offs_d < HS
    head = pid_bh * stride_hb  # q, k, v: (B*nh, T, hs) panels, same strides
    q = tl.load(q_ptr + head + offs_i[:, None] * stride_ht + offs_d[None, :],
                mask=mask_i[:, None] & mask_d[None, :], other=0.0)  # already scaled by 1/sqrt(hs)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    kv_off = offs_n[:, None] * stride_ht + offs_d[None, :]
    # off-diagonal blocks: every key j < i0 <= every query, all in bounds: no causal or row mask
    for j0 in tl.range(0, i0, BLOCK_N):
        k = tl.load(k_ptr + head + j0 * stride_ht + kv_off, mask=mask_d[None, :], other=0.0)
        v = tl.load(v_ptr + head + j0 * stride_ht + kv_off, mask=mask_d[None, :], other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="tf32x3")
        acc = tl.dot(tl.maximum(s, 0.0), v, acc, input_precision="tf32x3")
    # diagonal blocks: keys i0 .. min(i0 + BLOCK_M, T), causal + bounds mask
    hi = tl.minimum(i0 + BLOCK_M, T)
    for j0 in tl.range(i0, hi, BLOCK_N):
        offs_j = j0 + offs_n
        mask_j = offs_j < hi
        kvm = mask_j[:, None] & mask_d[None, :]
        k = tl.load(k_ptr + head + j0 * stride_ht + kv_off, mask=kvm, other=0.0)
        v = tl.load(v_ptr + head + j0 * stride_ht + kv_off, mask=kvm, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="tf32x3")
        causal = (offs_j[None, :] <= offs_i[:, None]) & mask_j[None, :]
        p = tl.where(causal, tl.maximum(s, 0.0), 0.0)
        acc = tl.dot(p, v, acc, input_precision="tf32x3")
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
        qkv = torch.empty((3, B, NH, T, HS), dtype=torch.float32, device=x.device)
        scale = 1.0 / math.sqrt(HS)
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)
        qkv_proj_kernel[grid](x, w, bvec, qkv, M, N, C, T, NH, HS, scale,
                              x.stride(0), x.stride(1), x.stride(2), w.stride(0), w.stride(1),
                              qkv.stride(0), qkv.stride(1), qkv.stride(2), qkv.stride(3))
        BD = max(16, triton.next_power_of_2(HS))
        agrid = lambda meta: (triton.cdiv(T, meta["BLOCK_M"]) * B * NH,)
        relu_attn_kernel[agrid](qkv[0], qkv[1], qkv[2], y, T, NH, HS, qkv.stride(2), qkv.stride(3),
                                y.stride(0), y.stride(1), BLOCK_D=BD)
        return y
