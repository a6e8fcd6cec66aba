# Audit harness: double_into(x, (out,)) writes 2x into the caller's buffer, [6, 40]: the caller allocates out like x.
import torch

ENTRY = "double_into"
AUDIT_SHAPE = (6, 40)


def make_inputs(case):
    x = case.randn(*case.shape)
    return (x, (torch.zeros_like(x),))


def reference(x, outs):
    return 2.0 * x
