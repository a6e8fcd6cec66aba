# Audit harness (task format): the example call of scale_global.scale.
ENTRY = "scale"
AUDIT_SHAPE = (6, 40)


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n),)


def reference(x):
    return x * 0.5
