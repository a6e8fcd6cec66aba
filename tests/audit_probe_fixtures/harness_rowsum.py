# Audit harness: rowsum(x) of a (6, 40) batch.
import torch

ENTRY = "rowsum"
AUDIT_SHAPE = (6, 40)


def make_inputs(case):
    return (case.randn(*case.shape),)


def reference(x):
    return torch.sum(x, dim=-1)
