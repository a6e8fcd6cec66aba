"""2-D op where strides matter: relu(x + b) with x of shape (M, N) and a bias b of shape (N,).

The validator also feeds the "medium" case in a transposed (column-major) layout and as a strided
slice x[:, ::2], so a kernel that assumes row-major contiguous memory is caught."""

import torch

SHAPES = {"small": (8, 64), "medium": (19, 45), "tall": (70, 3), "wide": (3, 200), "edge_empty": (0, 16)}


def make_inputs(case):
    m, n = case.shape
    return case.randn(m, n), case.randn(n)


def reference(x, b):
    return torch.relu(x + b)
