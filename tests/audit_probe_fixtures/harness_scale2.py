# Audit harness: scale2(x) on a (6, 40) tensor in the case's dtype (the harness names none).
ENTRY = "scale2"
AUDIT_SHAPE = (6, 40)


def make_inputs(case):
    return (case.randn(*case.shape),)


def reference(x):
    return x * 2
