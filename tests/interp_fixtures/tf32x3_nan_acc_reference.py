"""a @ b + c where row 0 of the accumulator c is NaN: a tf32x3 dot must keep it (the GPU adds C after the 3 dots)."""

import torch

SHAPES = {"nan_acc": (16, 64, 16)}  # M, K, N: one 16x16 program, 4 K steps of 16
DTYPES = ["float32"]
NONCONTIGUOUS = False


def make_inputs(case):
    m, k, n = case.shape
    c = case.randn(m, n)
    c[0] = float("nan")  # a NaN already in the accumulator before the first tl.dot
    return case.randn(m, k), case.randn(k, n), c


def reference(a, b, c):
    return torch.matmul(a, b) + c
