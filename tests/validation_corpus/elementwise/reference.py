"""Elementwise task: out = x * sigmoid(y) (a SiLU-style gate), 1-D."""

import torch

# Small, irregular sizes: a missing mask or a too-small grid shows on every one but "small".
SHAPES = {"small": (1024,), "medium": (3000,), "odd_7": (7,), "odd_1000": (1000,), "edge_empty": (0,)}


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(n)


def reference(x, y):
    return x * torch.sigmoid(y)
