"""A whole-tensor reduction: x / ||x||_F of a 64 x 64 x 256 x 256 fp32 tensor (1.1 GB)."""

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 64
features = 64
dim1 = 256
dim2 = 256


class Model(nn.Module):
    """y = x / torch.norm(x, p="fro")."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.norm(x, p="fro")


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2, device=DEVICE)]


def get_init_inputs():
    return []
