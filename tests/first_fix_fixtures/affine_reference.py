"""KernelBench-form elementwise problem (copy of tests/kernelbench_fixtures/affine_reference.py): y = 2x + 1."""

import torch
import torch.nn as nn

batch_size = 64
dim = 2048


class Model(nn.Module):
    """2x + 1, elementwise."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2.0 + 1.0


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
