# Audit harness: jagged_center(values, offsets) (each row minus its sequence's mean) for 3 sequences of 4, 0 and 5 rows of 24 features.
import torch

ENTRY = "jagged_center"
AUDIT_SHAPE = (9, 24)


def make_inputs(case):
    total, d = case.shape
    lengths = [4, 0, total - 4] if total >= 4 else [total]
    offsets = torch.tensor([0] + list(torch.tensor(lengths).cumsum(0)), dtype=torch.int64, device=case.device)
    return (case.randn(total, d), offsets)


def reference(values, offsets):
    out = values.float().clone()
    for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        out[a:b] -= values[a:b].float().mean(0)
    return out
