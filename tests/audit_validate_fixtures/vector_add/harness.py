# Audit harness (no task reference): the example call of good.py's entry, contiguous as its callers give it.
ENTRY = "reference"
AUDIT_SHAPE = (4097,)


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(n)


def reference(x, y):
    return x + y
