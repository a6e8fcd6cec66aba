"""Refuse (harness OOM): a reference that needs 4 TiB; the case is too big for the harness, not the candidate's fault."""

import torch


def make_inputs(case):
    n = case.shape[0]
    return case.randn(n), case.randn(n)


SHAPES = {"small": (1000,)}


def reference(x, y):
    scratch = torch.empty(1 << 42, dtype=torch.uint8, device=x.device)
    return x + y + scratch[:1].float() * 0
