"""A model with nn.Parameter weights: per-channel affine y = x * weight[c] + bias[c] (an inference-mode batch norm
folded), x 32 x 256 x 256 x 256 fp32 (2.1 GB)."""

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 32
channels = 256
height = 256
width = 256


class Model(nn.Module):
    """y = x * weight.view(1, C, 1, 1) + bias.view(1, C, 1, 1)."""

    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels))
        self.bias = nn.Parameter(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.weight.view(1, -1, 1, 1) + self.bias.view(1, -1, 1, 1)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, device=DEVICE)]


def get_init_inputs():
    return [channels]
