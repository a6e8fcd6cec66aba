"""Vector add reference for the fault suite (tests/test_faults.py, benchmarks/fault_suite.py)."""

SHAPES = {"small": (1000,), "edge_empty": (0,), "odd_7": (7,)}


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(n)


def reference(x, y):
    return x + y
