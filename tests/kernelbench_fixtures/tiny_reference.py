"""KernelBench-form problem with tiny outputs (fixture): y = 1e-5 * x, so |y| < 1e-4 = float32's atol."""

import torch
import torch.nn as nn

batch_size = 32
dim = 256


class Model(nn.Module):
    """A scale so small that the absolute tolerance alone would accept almost anything."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 1e-5


def get_inputs():
    return [torch.rand(batch_size, dim) * 4.0]


def get_init_inputs():
    return []
