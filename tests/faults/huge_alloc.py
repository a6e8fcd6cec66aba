"""Fault: one host allocation far beyond any limit (1 TiB): refused by the allocator, not a crash."""

import torch


def reference(x, y):
    big = torch.ones(1 << 38, dtype=torch.float32)
    return x + y + big[0]
