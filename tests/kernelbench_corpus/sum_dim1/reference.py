"""Reduction over a dim: sum over dim 1 of a 64 x 4096 x 2048 fp32 tensor (2.1 GB), keepdim."""

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 64
dim1 = 4096
dim2 = 2048
reduce_dim = 1


class Model(nn.Module):
    """y = x.sum(dim, keepdim=True)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2, device=DEVICE)]


def get_init_inputs():
    return [reduce_dim]
