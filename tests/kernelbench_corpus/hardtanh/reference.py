"""Elementwise: hardtanh (clamp to [-1, 1]) of a 4096 x 262144 fp32 tensor (4.3 GB)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 4096
dim = 262144


class Model(nn.Module):
    """y = hardtanh(x, -1, 1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.hardtanh(x, min_val=-1.0, max_val=1.0)


def get_inputs():
    return [torch.randn(batch_size, dim, device=DEVICE)]


def get_init_inputs():
    return []
