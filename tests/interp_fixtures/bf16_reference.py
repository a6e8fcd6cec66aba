"""bfloat16 references: an elementwise 2 * x (entry `reference`) and a small matmul (entry `matmul`)."""

import torch

SHAPES = {"small": (16, 32, 16)}
DTYPES = ["bfloat16"]
NONCONTIGUOUS = False


def make_inputs(case):
    m, k, n = case.shape
    return case.randn(m, k), case.randn(k, n)


def reference(a, b):
    return a * 2


def matmul(a, b):
    return torch.matmul(a, b)
