"""Elementwise: exact (erf) GELU of a 4096 x 393216 fp32 tensor (6.4 GB), KernelBench level-1 form."""

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # draw on the GPU: a 6.4 GB CPU randn takes ~10 s
batch_size = 4096
dim = 393216


class Model(nn.Module):
    """y = gelu(x), erf form."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, dim, device=DEVICE)]


def get_init_inputs():
    return []
