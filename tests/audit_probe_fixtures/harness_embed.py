# Audit harness: an embedding lookup whose padding_idx default (-1) means "none" (F.embedding refuses -1 as an index).
import torch

ENTRY = "embed"
AUDIT_SHAPE = (5, 16)


def make_inputs(case):
    n, dim = case.shape
    g = torch.Generator(device="cpu").manual_seed(case.seed)
    return (torch.randint(0, 10, (n,), generator=g).to(case.device), case.randn(10, dim))


def reference(idx, weight, padding_idx=-1):
    return torch.nn.functional.embedding(idx, weight)
