# Audit harness: the same lookup through the autograd Function's apply (*args: no defaults to leave out).
import torch

ENTRY = "embed_apply"
AUDIT_SHAPE = (5, 16)


def make_inputs(case):
    n, dim = case.shape
    g = torch.Generator(device="cpu").manual_seed(case.seed)
    return (torch.randint(0, 10, (n,), generator=g).to(case.device), case.randn(10, dim))


def reference(idx, weight):
    return torch.nn.functional.embedding(idx, weight)
