# Audit harness: linear(x, w) = x @ w.T for a batch of 6 rows of 40 features and a (24, 40) weight.
ENTRY = "linear"
AUDIT_SHAPE = (6, 40)


def make_inputs(case):
    m, k = case.shape
    return (case.randn(m, k), case.randn(24, k))


def reference(x, w):
    return x @ w.T
