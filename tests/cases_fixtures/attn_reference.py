"""Causal self-attention over pre-projected q, k, v whose mask is a buffer (the shape of KernelBench level 3
43_MinGPTCausalAttention): perturbing that buffer would make the problem non-causal."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, n_embd: int, n_head: int, max_seqlen: int):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_head = n_head
        self.temperature = nn.Parameter(torch.ones(1))
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        B, T, C = q.size()
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (self.temperature / math.sqrt(hs))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        return (att @ v).transpose(1, 2).contiguous().view(B, T, C)


batch_size = 8
max_seqlen = 512
seq_len = 256
n_embd = 256
n_head = 8


def get_inputs():
    return [torch.randn(batch_size, seq_len, n_embd) for _ in range(3)]


def get_init_inputs():
    return [n_embd, n_head, max_seqlen]
