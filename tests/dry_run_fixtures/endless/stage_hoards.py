"""BAD on fake tensors only: grows a host buffer until memory runs out (tests/faults/memory_blowup.py's loop, a loop
of torch ops); on fake tensors nothing is allocated, so it never ends and never hits a memory limit."""

import torch
import torch.nn as nn

_hoard = []


class ModelNew(nn.Module):
    def forward(self, x):
        while type(x).__name__ == "FakeTensor":
            try:
                _hoard.append(torch.ones(1 << 26))
                if len(_hoard) > 64:
                    _hoard.clear()
            except Exception:  # noqa: BLE001 - a user's catch-all: the dry run's stop must go through it
                pass
        return 2.0 * x + 1.0
