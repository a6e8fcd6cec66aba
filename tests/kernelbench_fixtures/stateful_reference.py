"""KernelBench-form reference that keeps state from call to call, as level 3's 33_VanillaRNN does (`self.hidden =
tanh(...)`): the tool's fake-tensor memory estimate ran it once on fake tensors, and it kept them as its state
(issue 40's trial)."""

import torch
import torch.nn as nn

batch_size = 8
dim = 64


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.hidden = torch.randn(batch_size, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.hidden = self.hidden.to(x.device)
        self.hidden = torch.tanh(x + self.hidden)
        return self.hidden * 2.0


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
