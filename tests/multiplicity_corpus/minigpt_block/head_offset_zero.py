"""Bug (issue 40's trial, stage 2): every head reads head 0's q, k and v columns (`h_in = bh * 0`) and writes its
own. With n_head shrunk to 1 it passed 21/21 contract cases; any case with 2 or more heads shows it."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def causal_attention_kernel(qkv_ptr, y_ptr, T, C, H, HS, scale, stride_qb, stride_qt, stride_yb, stride_yt,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    d_mask = offs_d < HS
    h_in = bh * 0
    base = qkv_ptr + b * stride_qb + h_in * HS + offs_d[None, :]
    q = tl.load(base + offs_m[:, None] * stride_qt, mask=(offs_m[:, None] < T) & d_mask[None, :], other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    for n0 in range(0, (pid_m + 1) * BLOCK_M, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        kv_mask = (offs_n[:, None] < T) & d_mask[None, :]
        k = tl.load(base + C + offs_n[:, None] * stride_qt, mask=kv_mask, other=0.0)
        v = tl.load(base + 2 * C + offs_n[:, None] * stride_qt, mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        s = tl.where((offs_n[None, :] <= offs_m[:, None]) & (offs_n[None, :] < T), s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(y_ptr + b * stride_yb + h * HS + offs_m[:, None] * stride_yt + offs_d[None, :], out,
             mask=(offs_m[:, None] < T) & d_mask[None, :])


def causal_attention(qkv: torch.Tensor, n_head: int) -> torch.Tensor:
    B, T, C3 = qkv.shape
    C = C3 // 3
    hs = C // n_head
    qkv = qkv.contiguous()
    y = torch.empty((B, T, C), dtype=qkv.dtype, device=qkv.device)
    if y.numel():
        grid = (triton.cdiv(T, 16), B * n_head)
        causal_attention_kernel[grid](qkv, y, T, C, n_head, hs, 1.0 / math.sqrt(hs), qkv.stride(0), qkv.stride(1),
                                      y.stride(0), y.stride(1), BLOCK_M=16, BLOCK_N=16,
                                      BLOCK_D=max(16, triton.next_power_of_2(hs)))
    return y


class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, attn_pdrop, resid_pdrop, max_seqlen):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen))
                             .view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head

    def forward(self, x):
        return self.c_proj(causal_attention(self.c_attn(x), self.n_head))


class ModelNew(nn.Module):
    def __init__(self, n_embd, n_head, attn_pdrop, resid_pdrop, max_seqlen):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, attn_pdrop, resid_pdrop, max_seqlen)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd), c_proj=nn.Linear(4 * n_embd, n_embd),
                                      act=NewGELU()))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        m = self.mlp
        return x + m.c_proj(F.gelu(m.c_fc(self.ln_2(x)), approximate="tanh"))
