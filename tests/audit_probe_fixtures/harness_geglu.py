# Audit harness: GEGLU-style halves (the last dim must be even); the reference accepts odd widths too (it drops the
# last column), as a hastily written harness does.
ENTRY = "geglu"
AUDIT_SHAPE = (6, 40)


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n),)


def reference(x):
    d = x.shape[-1] // 2
    return x[..., :d] * x[..., d:2 * d]
