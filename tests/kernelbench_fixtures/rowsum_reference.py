"""KernelBench-form problem (fixture): row sums of a (batch_size, dim) matrix; dim 4096 spans several chunks."""

import torch
import torch.nn as nn

batch_size = 16
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
