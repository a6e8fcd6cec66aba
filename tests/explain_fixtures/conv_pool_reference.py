"""Explain fixture (CPU test of run_benchmark explain=true): a conv + epilogue + pooling problem, small enough for the
CPU; torch.compile keeps the convolution in a library call and fuses the epilogue and the pooling into its own kernel."""

import torch.nn.functional as F

SHAPES = {"small": (2, 3, 16, 16)}
BENCH_SHAPES = {"bench": (4, 3, 16, 16)}


def make_inputs(case):
    n, c, h, w = case.shape
    return case.randn(n, c, h, w), case.randn(8, c, 3, 3) * 0.2, case.randn(8)


def reference(x, weight, bias):
    y = F.conv2d(x, weight, bias) - 0.5
    y = F.hardswish(y)
    return F.max_pool2d(y, 2)
