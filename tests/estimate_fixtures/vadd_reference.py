"""x + y over fp32 vectors; the benchmark's size (4 Mi elements) is past what the estimate runs, so it scales."""


SHAPES = {"small": (1000,), "odd_7": (7,), "edge_empty": (0,), "large": (1 << 16,)}
BENCH_SHAPES = {"big": (1 << 22,)}


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(n)


def reference(x, y):
    return x + y
