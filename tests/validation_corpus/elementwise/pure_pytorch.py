"""BUG (pure-PyTorch "kernel"): imports Triton but computes everything with PyTorch ops."""

import torch
import triton  # noqa: F401
import triton.language as tl  # noqa: F401


def reference(x, y):
    return x * torch.sigmoid(y)
