"""Row softmax of x + bias (bias broadcast over rows). Layout variants run (NONCONTIGUOUS defaults to true)."""

import torch

SHAPES = {"small": (4, 32), "medium": (9, 300), "odd_rows": (13, 7)}
DTYPES = ["float32"]


def make_inputs(case):
    m, n = case.shape
    return case.randn(m, n), case.randn(n)


def reference(x, bias):
    return torch.softmax(x + bias, dim=-1)
