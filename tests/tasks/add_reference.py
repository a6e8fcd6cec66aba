"""A tiny vector-add task used by the worker and MCP tests."""

SHAPES = {"small": (1000,), "edge_empty": (0,), "odd_7": (7,)}


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(n)


def reference(x, y):
    return x + y
