"""GELU with the tanh approximation (what GELU-tanh kernels compute with libdevice.tanh)."""

import torch

SHAPES = {"small": (6, 50), "odd": (5, 37)}
DTYPES = ["float32", "float16"]


def make_inputs(case):
    return (case.randn(*case.shape),)


def reference(x):
    return torch.nn.functional.gelu(x, approximate="tanh")
