"""Softmax of a 1-D vector, form (a) with the tool's default shapes (no SHAPES declared: its empty case is
robustness, since this problem never promised empty input)."""

import torch

RANK = 1


def make_inputs(case):
    return (case.randn(*case.shape),)


def reference(x):
    return torch.softmax(x, dim=0)
