# Audit harness: scale(x) = 2 x for a (6, 40) activation, trained through its own backward.
ENTRY = "scale"
AUDIT_SHAPE = (6, 40)


def make_inputs(case):
    return (case.randn(*case.shape),)


def reference(x):
    return 2.0 * x
