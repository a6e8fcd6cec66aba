# Audit harness (task format) of scalepkg's entries: a flat float32 vector, a multiple of the block (the example
# passes; the sizes probe's tails do not, for the unmasked kernel). This folder is on sys.path once the harness is
# loaded, so `from scalepkg.kernels import ...` resolves to the package beside it.
ENTRY = "scale"
AUDIT_SHAPE = (1024,)


def make_inputs(case):
    (n,) = case.shape
    return (case.randn(n),)


def reference(x):
    return x * 2.0
