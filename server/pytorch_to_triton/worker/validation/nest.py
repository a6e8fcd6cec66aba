"""Outputs and inputs as flat lists: a reference may return a tensor, a tuple of them, or nested tuples."""

from __future__ import annotations

from typing import Any

import torch


def flatten(out: Any) -> list[Any]:
    """Every leaf of nested tuples/lists, in order (a lone value becomes a one-item list)."""
    if isinstance(out, (tuple, list)):
        items = []
        for o in out:
            items.extend(flatten(o))
        return items
    return [out]


def tensors(xs: list[Any]) -> list[torch.Tensor]:
    """The tensors among a flat list's items."""
    return [x for x in xs if isinstance(x, torch.Tensor)]


def tensors_in(value: Any) -> list[torch.Tensor]:
    """Every tensor in a value, through lists, tuples and dicts (inputs, outputs, get_inputs() results)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []
