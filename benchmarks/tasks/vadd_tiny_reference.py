"""vadd_reference.py's five cases at sizes the interpreter runs in milliseconds: on a CPU-only machine the harness
and the worker protocol, not the interpreted kernel, make up most of a warm validation (benchmarks/explore/worker_gap.py (git history))."""

SHAPES = {"small": (64,), "medium": (300,), "edge_empty": (0,), "edge_single": (1,), "odd_97": (97,)}


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(n)


def reference(x, y):
    return x + y
