"""Fault: host memory grows without bound (256 MiB a step, every page touched)."""

import torch

_hoard = []


def reference(x, y):
    while True:
        _hoard.append(torch.ones(1 << 26, dtype=torch.float32))
