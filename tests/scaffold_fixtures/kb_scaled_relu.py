"""A KernelBench-form problem (written for these tests): relu(x) * alpha, sizes at module level."""

import torch
import torch.nn as nn

batch_size = 4
dim = 300


class Model(nn.Module):
    """KernelBench files call super(Model, self): the scaffold must turn that into super() in ModelNew."""

    def __init__(self, alpha: float):
        super(Model, self).__init__()  # noqa: UP008 - the KernelBench spelling, on purpose
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * self.alpha


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [2.0]
