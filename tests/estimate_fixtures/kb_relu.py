"""A KernelBench-form problem (written for these tests): relu of a 4096 x 4096 fp32 matrix, too big for the
interpreter, so the estimate runs at the shrunk validation size and scales by the inputs + outputs ratio."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
