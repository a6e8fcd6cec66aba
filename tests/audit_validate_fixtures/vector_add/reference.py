"""Vector add task (form a): out = x + y, 1-D. The problem builds contiguous inputs (no NONCONTIGUOUS): a strided
input is robustness, for run_validation and audit_kernel alike (issue 45)."""

SHAPES = {"small": (1000,), "medium": (4097,), "odd_7": (7,)}


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(n)


def reference(x, y):
    return x + y
