"""KernelBench-form LayerNorm (fixture): nn.LayerNorm(features) with its default weight 1 and bias 0."""

import torch
import torch.nn as nn

batch_size = 64
features = 256


class Model(nn.Module):
    """LayerNorm over the last dim; the default affine parameters are the identity."""

    def __init__(self, features: int):
        super().__init__()
        self.ln = nn.LayerNorm(features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, features)]


def get_init_inputs():
    return [features]
