"""Vector add with five cases: the latency benchmark's task (issue 3)."""

SHAPES = {"small": (1024,), "medium": (98432,), "edge_empty": (0,), "edge_single": (1,), "odd_4097": (4097,)}


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(n)


def reference(x, y):
    return x + y
