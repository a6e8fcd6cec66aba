"""Elementwise: swish x * sigmoid(x) of a 4096 x 196608 fp32 tensor (3.2 GB)."""

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 4096
dim = 196608


class Model(nn.Module):
    """y = x * sigmoid(x)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim, device=DEVICE)]


def get_init_inputs():
    return []
