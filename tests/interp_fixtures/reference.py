"""Shared reference of the interpreter fixtures: a vector add (each candidate here has one known error)."""

SHAPES = {"small": (100,)}
DTYPES = ["float32"]
NONCONTIGUOUS = False


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(n)


def reference(x, y):
    return x + y
