"""Row mean of a 2-D tensor (a row reduction), in float16 and float32.

Values sit around 100, so a row of 1000 sums to ~1e5: past float16's largest finite value (65504).
A float32 accumulator is fine; a float16 one overflows to inf."""

import torch

SHAPES = {"small": (4, 256), "medium": (9, 1000), "odd": (5, 77), "edge_empty": (0, 32)}
DTYPES = ["float16", "float32"]


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n) * 10 + 100,)


def reference(x):
    return x.mean(dim=-1)
