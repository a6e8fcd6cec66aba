"""BAD at full size (issue 46's MiniGPT case, KernelBench L3 44): causal flash attention whose tiles follow the head
size. Right at any size the interpreter runs; with the sidecar's small sizes the head size is 16 (BLOCK_D = 16), at
the problem's size it is 96 (BLOCK_D = 128), where the q tile and five pipelined k/v stages need more shared memory
than an H100 has per block: the GPU refuses the launch (OutOfResources: shared memory)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def flash_attention_kernel(qkv_ptr, y_ptr, T, C, H, HS, scale, stride_qb, stride_qt, stride_yb, stride_yt,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    d_mask = offs_d < HS
    base = qkv_ptr + b.to(tl.int64) * stride_qb + h * HS + offs_d[None, :]
    q = tl.load(base + offs_m[:, None] * stride_qt, mask=(offs_m[:, None] < T) & d_mask[None, :], other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    for n0 in range(0, tl.minimum((pid_m + 1) * BLOCK_M, T), BLOCK_N):
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
    tl.store(y_ptr + b.to(tl.int64) * stride_yb + h * HS + offs_m[:, None] * stride_yt + offs_d[None, :], out,
             mask=(offs_m[:, None] < T) & d_mask[None, :])


def causal_attention(qkv: torch.Tensor, n_head: int) -> torch.Tensor:
    B, T, C3 = qkv.shape
    C = C3 // 3
    hs = C // n_head
    qkv = qkv.contiguous()
    y = torch.empty((B, T, C), dtype=qkv.dtype, device=qkv.device)
    block_d = max(16, triton.next_power_of_2(hs))
    stages = 5 if block_d >= 64 else 3  # deeper pipelining for the wider heads
    grid = (triton.cdiv(T, 32), B * n_head)
    flash_attention_kernel[grid](qkv, y, T, C, n_head, hs, 1.0 / math.sqrt(hs), qkv.stride(0), qkv.stride(1),
                                 y.stride(0), y.stride(1), BLOCK_M=32, BLOCK_N=64, BLOCK_D=block_d,
                                 num_warps=4, num_stages=stages)
    return y


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
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd), c_proj=nn.Linear(4 * n_embd, n_embd)))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        m = self.mlp
        return x + m.c_proj(F.gelu(m.c_fc(self.ln_2(x)), approximate="tanh"))
