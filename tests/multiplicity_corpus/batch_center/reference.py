"""Per-sample centering over the sequence, in KernelBench's form: y[b] = x[b] - mean over t of x[b, t]."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x - x.mean(dim=1, keepdim=True)


batch_size = 16
seq_len = 256
dim = 512


def get_inputs():
    return [torch.randn(batch_size, seq_len, dim)]


def get_init_inputs():
    return []
