"""Poison the memory candidates allocate, so an output element the kernel never writes is caught.

While `POISON.active` is set, torch.empty, torch.empty_like, torch.empty_strided and
Tensor.new_empty return tensors pre-filled with `POISON.float_value` (floating dtypes) or an integer
sentinel. The patch is installed once at worker start (so `from torch import empty` done at import
time is covered too) and only acts inside a candidate call, never inside Triton's own launch code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

from ..device.runtime import RECORDER

INT_SENTINELS = {
    torch.int8: -113, torch.uint8: 173, torch.int16: -12345, torch.int32: -1234567891,
    torch.int64: -1234567891234567891,
}


@dataclass
class PoisonState:
    """Which poison is in force."""

    active: bool = False
    float_value: float = math.nan
    int_offset: int = 0  # the second run uses a different integer sentinel

    def int_value(self, dtype: torch.dtype) -> int | None:
        """The integer sentinel for a dtype (None for bool, which cannot be poisoned)."""
        base = INT_SENTINELS.get(dtype)
        return None if base is None else base + self.int_offset


POISON = PoisonState()
FLOAT_POISON_B = -7777.0  # run B's poison: finite, so unwritten elements show up in both runs differently
INT_OFFSET_B = 3
_ORIG: dict[str, Any] = {}


def fill_poison(t: torch.Tensor) -> torch.Tensor:
    """Fill a freshly allocated tensor with the active poison (works for strided storage too)."""
    if t.device.type == "meta" or t.numel() == 0:
        return t
    with torch.no_grad():
        if t.is_floating_point():
            t.fill_(POISON.float_value)
        elif t.dtype == torch.bool:
            t.fill_(True)
        else:
            v = POISON.int_value(t.dtype)
            if v is not None:
                t.fill_(v)
    return t


def _wrap(fn: Any) -> Any:
    def poisoned(*args: Any, **kwargs: Any) -> Any:
        t = fn(*args, **kwargs)
        if POISON.active and not RECORDER.in_launch and isinstance(t, torch.Tensor):
            fill_poison(t)
        return t

    poisoned.__wrapped__ = fn  # type: ignore[attr-defined]
    poisoned.__name__ = getattr(fn, "__name__", "empty")
    return poisoned


def install() -> None:
    """Patch the allocation functions once (idempotent)."""
    if _ORIG:
        return
    for name in ("empty", "empty_like", "empty_strided"):
        _ORIG[name] = getattr(torch, name)
        setattr(torch, name, _wrap(_ORIG[name]))
    _ORIG["new_empty"] = torch.Tensor.new_empty
    torch.Tensor.new_empty = _wrap(_ORIG["new_empty"])


def original(name: str) -> Any:
    """The unpatched allocation function (for our own buffers)."""
    return _ORIG.get(name) or getattr(torch, name)
