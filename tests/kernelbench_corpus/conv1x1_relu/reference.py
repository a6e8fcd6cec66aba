"""A model with nn.Conv2d weights: relu(conv2d_1x1(x)), x 64 x 64 x 256 x 256 fp32 (1.1 GB), 128 output channels."""

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 64
in_channels = 64
out_channels = 128
height = 256
width = 256


class Model(nn.Module):
    """y = relu(Conv2d(in_channels, out_channels, kernel_size=1)(x))."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width, device=DEVICE)]


def get_init_inputs():
    return [in_channels, out_channels]
