"""Scan: inclusive cumsum over dim 1 of a 32768 x 32768 fp32 tensor (4.3 GB in, 4.3 GB out).

Uniform [0, 1) inputs, as KernelBench's scan problems draw them: the running sum grows monotonically, so the
fp32 rounding of a blocked scan stays far inside the default relative tolerance (randn values would cross zero
and leave absolute errors of ~2e-4 at 8192 columns, outside atol=1e-4 against float64)."""

import torch
import torch.nn as nn

batch_size = 32768
input_shape = (32768,)
dim = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.dim)


def get_inputs():
    return [torch.rand(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]
