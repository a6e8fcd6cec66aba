"""KernelBench-form x @ W^T (fixture): 4096^3; the interpreter's shrunk batch (128) sits inside a 256-row tile."""

import torch
import torch.nn as nn

batch_size = 4096
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
