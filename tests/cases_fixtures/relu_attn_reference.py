"""KernelBench level 3 50_ReLUSelfAttention's sizes (fixture): n_head 12 halves to 3, then cannot halve with
n_embd; the head size (768 / 12 = 64) must still survive the interpreter's shrink."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
max_seqlen = 1024
n_embd = 768
n_head = 12


class Model(nn.Module):
    def __init__(self, n_embd, n_head, max_seqlen):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))
        self.n_head, self.n_embd = n_head, n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = F.relu(att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf")))
        return (att @ v).transpose(1, 2).contiguous().view(B, T, C)


def get_inputs():
    return [torch.rand(batch_size, max_seqlen, n_embd)]


def get_init_inputs():
    return [n_embd, n_head, max_seqlen]
