"""Normalization over several trailing dims: LayerNorm over (C, H, W) of a 64 x 64 x 256 x 256 fp32 tensor (1.1 GB)."""

import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
batch_size = 64
features = 64
dim1 = 256
dim2 = 256


class Model(nn.Module):
    """nn.LayerNorm(normalized_shape=(features, dim1, dim2)) with its affine weight and bias."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)
        with torch.no_grad():  # non-trivial affine parameters, so a candidate that ignores them fails
            self.ln.weight.uniform_(0.5, 1.5)
            self.ln.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2, device=DEVICE)]


def get_init_inputs():
    return [(features, dim1, dim2)]
