"""Reference of the composition fixtures: a linear layer followed by a sigmoid-scaled epilogue (GEMM + epilogue,
the shape of KernelBench level-2 problems)."""

import torch

SHAPES = {"small": (16, 32, 24), "odd": (7, 33, 19)}
DTYPES = ["float32"]
NONCONTIGUOUS = False


def make_inputs(case):
    m, k, n = case.shape
    return case.randn(m, k), case.randn(n, k) * 0.1, case.randn(n)


def reference(x, w, b):
    y = torch.nn.functional.linear(x, w, b)
    return torch.sigmoid(y) * 2.0 + 1.0
