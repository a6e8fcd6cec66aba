"""Elementwise: softplus log(1 + exp(x)) of a 4096 x 131072 fp32 tensor (2.1 GB), KernelBench level-1 form."""

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"  # draw on the GPU: a CPU randn of GBs takes seconds
batch_size = 4096
dim = 131072


class Model(nn.Module):
    """y = softplus(x) (beta 1, threshold 20)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(x)


def get_inputs():
    return [torch.randn(batch_size, dim, device=DEVICE)]


def get_init_inputs():
    return []
