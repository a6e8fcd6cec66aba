"""Row-wise log_softmax over dim 1 of a 16384 x 16384 fp32 tensor (1.1 GB)."""

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 16384
dim = 16384


class Model(nn.Module):
    """y = torch.log_softmax(x, dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim, device=DEVICE)]


def get_init_inputs():
    return []
