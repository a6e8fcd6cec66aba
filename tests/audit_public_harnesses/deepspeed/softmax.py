# Audit harness for tests/audit_public_corpus/deepspeed/softmax.py: softmax(input) over the last dim of [B, H, S, S].
import torch

ENTRY = "softmax"
AUDIT_SHAPE = (2, 3, 7, 50)


def make_inputs(case):
    return (case.randn(*case.shape),)


def reference(x):
    return torch.softmax(x, -1)
