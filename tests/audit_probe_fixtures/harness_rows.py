# Audit harness (task format): the example call of a row-wise entry. ENTRY names the function of the audited file.
ENTRY = "softmax"
AUDIT_SHAPE = (6, 40)


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n),)
