"""Attention: softmax(Q K^T / sqrt(d)) V for B, H, S, D = 16, 32, 2048, 64 fp32 (0.8 GB of inputs)."""

import math

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 16
num_heads = 32
seq_len = 2048
head_dim = 64


class Model(nn.Module):
    """Plain (non-causal) scaled dot-product attention, written out."""

    def __init__(self):
        super().__init__()

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        return torch.softmax(scores, dim=-1) @ v


def get_inputs():
    shape = (batch_size, num_heads, seq_len, head_dim)
    return [torch.randn(shape, device=DEVICE), torch.randn(shape, device=DEVICE), torch.randn(shape, device=DEVICE)]


def get_init_inputs():
    return []
