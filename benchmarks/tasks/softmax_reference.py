"""Naive softmax (what a user writes): the reference whose torch.compile is the baseline."""

import torch

SHAPES = {"small": (16, 128), "odd": (37, 1000)}
BENCH_SHAPES = {"16384x4096": (16384, 4096)}
DTYPES = ["bfloat16"]


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n),)


def reference(x):
    xf = x.float()
    e = torch.exp(xf - xf.max(dim=-1, keepdim=True).values)
    return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype)
