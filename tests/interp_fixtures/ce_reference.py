"""Per-row cross-entropy with ignore_index=-100 (reduction='none'): some targets are -100 and give a loss of 0."""

import torch

SHAPES = {"small": (6, 10), "odd": (5, 37)}
DTYPES = ["float32"]
NONCONTIGUOUS = False


def make_inputs(case):
    n, v = case.shape
    g = torch.Generator(device="cpu").manual_seed(case.seed)
    targets = torch.randint(0, v, (n,), generator=g)
    targets[::3] = -100
    return case.randn(n, v), targets.to(case.device)


def reference(logits, targets):
    return torch.nn.functional.cross_entropy(logits, targets, ignore_index=-100, reduction="none")
