"""Reduction over the last dim: mean over dim 2 of a 32 x 4096 x 2048 fp32 tensor (1.1 GB)."""

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 32
dim1 = 4096
dim2 = 2048
reduce_dim = 2


class Model(nn.Module):
    """y = x.mean(dim)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.mean(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2, device=DEVICE)]


def get_init_inputs():
    return [reduce_dim]
