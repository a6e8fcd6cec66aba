"""Bad (candidate OOM): holds a 40 GB buffer, then asks for 200 GB more, more than the GPU holds.

The 40 GB live in the candidate's frame when the error is raised: the traceback keeps them unless the harness
clears it, so this also checks that memory is back at the baseline after the failing call."""

import torch
import torch.nn as nn
from swish_good import ModelNew as _Good


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = _Good()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        held = torch.empty(40 * 10**9, dtype=torch.uint8, device=x.device) if x.is_cuda else None
        scratch = torch.empty(200 * 10**9, dtype=torch.uint8, device=x.device)
        return self.inner(x) + scratch[:1].float() * 0 + (0 if held is None else held[:1].float() * 0)
