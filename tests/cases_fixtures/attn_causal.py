"""Correct: flash-style causal attention that hard-codes causality (offs_n <= offs_m) and never reads the mask."""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def causal_attn_kernel(q_ptr, k_ptr, v_ptr, o_ptr, temp_ptr, T, H, HS, stride_b, stride_t, sm_scale,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    base = b * stride_b + h * HS
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    d_ok = offs_d < HS
    q = tl.load(q_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :],
                mask=(offs_m[:, None] < T) & d_ok[None, :], other=0.0)
    scale = tl.load(temp_ptr) * sm_scale
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    hi = tl.minimum((pid_m + 1) * BLOCK_M, T)
    for start_n in range(0, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kv_ok = (offs_n[:, None] < T) & d_ok[None, :]
        k = tl.load(k_ptr + base + offs_n[:, None] * stride_t + offs_d[None, :], mask=kv_ok, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        causal = (offs_n[None, :] <= offs_m[:, None]) & (offs_n[None, :] < T)
        s = tl.where(causal, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + offs_n[:, None] * stride_t + offs_d[None, :], mask=kv_ok, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * stride_t + offs_d[None, :], out, mask=(offs_m[:, None] < T) & d_ok[None, :])


class ModelNew(nn.Module):
    def __init__(self, n_embd: int, n_head: int, max_seqlen: int):
        super().__init__()
        self.n_head = n_head
        self.temperature = nn.Parameter(torch.ones(1))
        # Kept so the state_dict matches the reference's (parameters are synced); the kernel is causal by itself.
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, T, C = q.shape
        out = torch.empty_like(q)
        if out.numel() == 0:
            return out
        hs = C // self.n_head
        BLOCK = 16
        grid = (triton.cdiv(T, BLOCK), B * self.n_head)
        causal_attn_kernel[grid](q, k, v, out, self.temperature, T, self.n_head, hs, q.stride(0), q.stride(1),
                                 1.0 / math.sqrt(hs), BLOCK_M=BLOCK, BLOCK_N=BLOCK,
                                 BLOCK_D=max(16, triton.next_power_of_2(hs)))
        return out
