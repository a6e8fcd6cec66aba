"""Bad input: a reference whose make_inputs builds inputs it rejects itself (shapes 8 and 3 do not add)."""

SHAPES = {"mismatched": (8,)}


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(3)


def reference(x, y):
    return x + y
