# Audit harness (task format): the example call of a cross-entropy entry (logits, target) -> per-row loss.
import torch

ENTRY = "cross_entropy"
AUDIT_SHAPE = (5, 33)


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n), case.randint(0, n, (m,)))


def reference(logits, target, ignore_index=-100):
    return torch.nn.functional.cross_entropy(logits, target, ignore_index=ignore_index, reduction="none")
