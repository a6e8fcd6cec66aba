"""Vector add reference that ends the process on the odd_7 case (stands in, on CPU, for a reference whose op hits a
device-side assert on inputs the harness made, like F.cross_entropy with targets out of range). Expected: the
case is skipped as the harness's fault for every candidate, the other cases run, no candidate is blamed."""

import os

SHAPES = {"small": (1000,), "odd_7": (7,), "medium": (4099,)}


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(n)


def reference(x, y):
    if x.numel() == 7:
        os._exit(9)
    return x + y
