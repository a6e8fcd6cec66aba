"""Elementwise: x * sigmoid(x) over a 4096 x 393216 fp32 tensor (6.4 GB in, 6.4 GB out)."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 393216


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
