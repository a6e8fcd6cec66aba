# Audit harness: min-p filtering (-inf marks what is filtered out) with a 1-D weight.
import torch

ENTRY = "apply_min_p"
AUDIT_SHAPE = (6, 40)


def make_inputs(case):
    m, n = case.shape
    return (case.randn(m, n) * 3.0, case.randn(n).abs() + 0.5)


def reference(logits, weight, min_p=0.1):
    x = logits * weight[None, :]
    p = torch.softmax(x, dim=-1)
    keep = p >= min_p * p.max(dim=-1, keepdim=True).values
    return torch.where(keep, x, torch.full_like(x, float("-inf")))
