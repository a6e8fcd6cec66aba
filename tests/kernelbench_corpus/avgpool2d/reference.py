"""Pooling: 2-D average pool, kernel 2, stride 2, of a 32 x 64 x 512 x 512 fp32 tensor (2.1 GB)."""

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 32
channels = 64
height = 512
width = 512
kernel_size = 2
stride = 2


class Model(nn.Module):
    """nn.AvgPool2d(kernel_size, stride), no padding, floor mode."""

    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width, device=DEVICE)]


def get_init_inputs():
    return [kernel_size, stride]
