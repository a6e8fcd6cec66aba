"""Fault: one allocation of 32 TiB on the inputs' device (GPU out of memory; on CPU the allocator refuses)."""

import torch


def reference(x, y):
    big = torch.empty(1 << 45, dtype=torch.uint8, device=x.device)
    return x + y + big[:1].float()
