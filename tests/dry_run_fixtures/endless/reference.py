"""A KernelBench-form problem: y = 2 x + 1 over (batch_size, dim); its stages never end on fake tensors."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 2.0 * x + 1.0


batch_size = 64
dim = 32


def get_inputs():
    return [torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
