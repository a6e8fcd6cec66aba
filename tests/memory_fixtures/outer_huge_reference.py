"""Refuse: small inputs (2 x 16 MiB), an outer product of 64 TiB. Its inputs alone would let the case run before its
estimate (validate.py: a worker's first request); the reference then runs out of memory and the case must be
refused with the estimate, as it is up front."""


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(n)


SHAPES = {"big": (1 << 22,)}


def reference(x, y):
    return x[:, None] * y[None, :]
