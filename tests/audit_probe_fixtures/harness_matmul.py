# Audit harness: matmul(a, b) for a (24, 48) x (48, 20) fp32 product.
ENTRY = "matmul"
AUDIT_SHAPE = (24, 48)


def make_inputs(case):
    m, k = case.shape
    return (case.randn(m, k), case.randn(k, 20))


def reference(a, b):
    return a @ b
