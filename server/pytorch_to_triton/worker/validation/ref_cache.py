"""The reference's side of a case, kept across calls while the reference does not change (issue 28: a warm
run_validation under 50 ms beyond the kernel work).

While an assistant iterates on a candidate, the reference file, the seed and so each case's inputs stay the same:
the reference's outputs (float64 where there is one), PyTorch's own error against them (per window) and whether the reference
writes into its inputs are the same on every call. Per case that was a float64 run, a native run, an input
comparison, a full error pass and a fingerprint: about a third of a warm vector-add validation's tensor ops.

An entry is used only when
- its key matches: reference path and content (with its folder's helper files, kernel_reuse.fingerprint), entry
  name, device, case label, shape, dtype, scale, seed, the float64 choice, the tolerances;
- the case's inputs, made afresh on every call, have the values, shapes, dtypes and strides the entry was computed
  from (a make_inputs that ignores the case's generator makes other inputs and never hits).
The candidate's side is never cached: every check of the candidate runs on every call.
Small cases only (MAX_ENTRY_BYTES), MAX_BYTES in all: they stay on the device, below the GPU memory a worker may
hold between calls before the server replaces it (worker_client.MEMORY_SLACK_BYTES, 64 MiB).
P2T_REUSE_REFERENCE=0 turns it off.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import torch

from .compare import OwnError, fingerprint

MAX_ENTRY_BYTES = 2 << 20
MAX_BYTES = 16 << 20


@dataclass
class RefSide:
    """What the rest of a case needs from the reference."""

    expected: list[torch.Tensor]  # what the runs are compared against (float64 where there is one)
    own: list[OwnError | None]  # PyTorch's own error vs float64 per output (compare.own_error), or None
    ref_meta: list[tuple[Any, ...]]  # (shape, dtype, device, is_tensor) per output
    ref_fp: Any  # fingerprint of the native outputs (the cross-trial stale check), or None
    ref_mutates: bool  # the reference writes into its inputs
    ref_bytes: int  # bytes of the native outputs (the case's io_bytes)
    notes: list[str] = field(default_factory=list)  # notes computing it added (replayed on a hit)
    inputs_key: Any = None
    expected_key: Any = None  # fingerprint of `expected` when stored: an entry changed in memory since is dropped


_CACHE: OrderedDict[tuple[Any, ...], RefSide] = OrderedDict()
_BYTES = [0]


def enabled() -> bool:
    """Off with P2T_REUSE_REFERENCE=0."""
    return os.environ.get("P2T_REUSE_REFERENCE", "1") != "0"


def _size(side: RefSide) -> int:
    return sum(t.numel() * t.element_size() for t in _held(side))


def _held(side: RefSide) -> list[torch.Tensor]:
    """The tensors an entry keeps: the expected outputs and the own-error windows."""
    return [t for t in side.expected if isinstance(t, torch.Tensor)] + [o.windows for o in side.own if o is not None]


def _inputs_key(inputs: list[Any]) -> Any:
    strides = tuple(tuple(x.stride()) if isinstance(x, torch.Tensor) else None for x in inputs)
    return fingerprint(list(inputs)), strides


def get(key: tuple[Any, ...], inputs: list[Any]) -> RefSide | None:
    """The entry for `key` when these inputs are the ones it was computed from; else None (and it is dropped)."""
    side = _CACHE.get(key)
    if side is None:
        return None
    # Candidates run in this process (issue 30): one that found the cached tensors (gc.get_objects) and wrote into
    # them would change what later candidates are judged against, so an entry must still hold what was stored.
    if side.inputs_key != _inputs_key(inputs) or side.expected_key != fingerprint(_held(side)):
        _BYTES[0] -= _size(_CACHE.pop(key))
        return None
    _CACHE.move_to_end(key)
    return side


def put(key: tuple[Any, ...], inputs: list[Any], side: RefSide) -> None:
    """Keep `side` for `key` (small cases only; the oldest entries go past MAX_BYTES)."""
    size = _size(side)
    if size > MAX_ENTRY_BYTES:
        return
    side.inputs_key = _inputs_key(inputs)
    side.expected_key = fingerprint(_held(side))
    old = _CACHE.pop(key, None)
    if old is not None:
        _BYTES[0] -= _size(old)
    _CACHE[key] = side
    _BYTES[0] += size
    while _BYTES[0] > MAX_BYTES and _CACHE:
        _BYTES[0] -= _size(_CACHE.pop(next(iter(_CACHE))))


def held_bytes() -> int:
    """Bytes of tensors the cache holds."""
    return _BYTES[0]


def clear() -> None:
    """Forget every entry."""
    _CACHE.clear()
    _BYTES[0] = 0
