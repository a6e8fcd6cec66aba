"""KernelBench-form problem (fixture) with a GroupNorm over its channels (issue 40's second trial, 21_Conv2d..GroupNorm):
the automatic odd variant makes channels 15, which 8 groups do not divide; the first fallback keeps every other size
odd (height, width) instead of one size alone."""

import torch
import torch.nn as nn

batch_size = 4
channels = 16
num_groups = 8
height = 16
width = 16


class Model(nn.Module):
    def __init__(self, channels, num_groups):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.norm(x))


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, num_groups]
