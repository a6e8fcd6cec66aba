"""Explain fixture (CPU test of run_benchmark explain=true): a GEMM with an epilogue (bias, scale, GELU, row sum):
torch.compile keeps the matmul in a library call and fuses the rest."""

import torch.nn.functional as F

SHAPES = {"small": (16, 32, 24)}
BENCH_SHAPES = {"bench": (64, 128, 96)}


def make_inputs(case):
    m, k, n = case.shape
    return case.randn(m, k), case.randn(k, n), case.randn(n)


def reference(a, b, bias):
    y = F.gelu((a @ b + bias) * 0.5)
    return y, y.sum(dim=1)
