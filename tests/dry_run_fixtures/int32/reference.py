"""A KernelBench-form problem over more than 2^31 elements: y = relu(x) * 3 over (batch_size, dim)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x) * 3.0


batch_size = 65536
dim = 40000


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
