"""Batched matmul: C = A @ B for 64 batches of 1024 x 1024 x 1024 fp32 (0.5 GB of inputs)."""

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 64
m = 1024
k = 1024
n = 1024


class Model(nn.Module):
    """C = torch.bmm(A, B)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


def get_inputs():
    return [torch.randn(batch_size, m, k, device=DEVICE), torch.randn(batch_size, k, n, device=DEVICE)]


def get_init_inputs():
    return []
