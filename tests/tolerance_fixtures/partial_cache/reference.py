"""x * 2 + sum(w): a function-form task for the stale check's evidence (tests/test_tolerances.py)."""

SHAPES = {"medium": (1000,)}
DTYPES = ["float32"]


def make_inputs(case):
    (n,) = case.shape
    return (case.randn(n), case.randn(64))


def reference(x, w):
    return x * 2 + w.sum()
