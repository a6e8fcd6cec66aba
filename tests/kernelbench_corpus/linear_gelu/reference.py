"""A model with nn.Linear weights: gelu(x @ W^T + b), x 16384 x 8192, W 8192 x 8192 fp32 (0.8 GB)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 16384
in_features = 8192
out_features = 8192


class Model(nn.Module):
    """y = gelu(linear(x)) (tanh approximation)."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.fc(x), approximate="tanh")


def get_inputs():
    return [torch.randn(batch_size, in_features, device=DEVICE)]


def get_init_inputs():
    return [in_features, out_features]
