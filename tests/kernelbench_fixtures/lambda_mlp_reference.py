"""KernelBench-form problem (fixture) whose forward calls a lambda that closes over an fp32 module, as minGPT's
block does (`self.mlpf = lambda x: ...`): a float64 copy of the model still calls the fp32 module, so the float64
reference is unavailable on every case (issue 40: the note was printed once per case)."""

import torch
import torch.nn as nn

batch_size = 16
dim = 64


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        fc = self.fc
        self.f = lambda x: fc(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.f(x))


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
