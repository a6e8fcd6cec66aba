"""Matmul with an epilogue: relu(A @ B + bias), M = N = K = 8192 fp32 (0.5 GB of inputs).

fp32 matmul in full precision: the candidate must not round to tf32 (10-bit mantissa), which errs by ~1e-3
relative here, 10x the fp32 tolerance (torch's fp32 matmul default is IEEE fp32 too).
"""

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
M = 8192
N = 8192
K = 8192


class Model(nn.Module):
    """C = relu(A @ B + bias)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return torch.relu(A @ B + bias)


def get_inputs():
    return [torch.randn(M, K, device=DEVICE), torch.randn(K, N, device=DEVICE), torch.randn(N, device=DEVICE)]


def get_init_inputs():
    return []
