"""Causal attention task in KernelBench form: softmax(q k^T / sqrt(d), causal) v. The sequence length is the first
size, so the validator's robustness case "zero" (an empty dim the problem never produces) empties it."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


seq_len = 48
batch_size = 2
n_heads = 2
head_dim = 16


def get_inputs():
    return [torch.randn(batch_size, n_heads, seq_len, head_dim) for _ in range(3)]


def get_init_inputs():
    return []
