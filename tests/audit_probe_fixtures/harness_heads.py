# Audit harness: head_scale(x) = x / 2 for (tokens, heads, head_dim) activations.
ENTRY = "head_scale"
AUDIT_SHAPE = (6, 4, 32)


def make_inputs(case):
    return (case.randn(*case.shape),)


def reference(x):
    return x * 0.5
