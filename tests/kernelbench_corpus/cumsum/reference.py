"""Scan: inclusive cumsum over dim 1 of a 32768 x 32768 fp32 tensor (4.3 GB).

Uniform [0, 1) inputs, as KernelBench's scan problems draw them: the running sum never crosses zero, so the
fp32 rounding of a blocked scan stays far inside the default relative tolerance.
"""

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 32768
length = 32768
dim = 1


class Model(nn.Module):
    """y = torch.cumsum(x, dim)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=self.dim)


def get_inputs():
    return [torch.rand(batch_size, length, device=DEVICE)]


def get_init_inputs():
    return [dim]
