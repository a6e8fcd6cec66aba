"""Every input the audit's probes invent, and why: the one home of probe cases (STYLE.md habit 9).

Each function takes the example call's inputs (or its case shape) and returns labelled variants; the label is what
a reproducer names (`--only LABEL`). Tiers, cheapest first, all small enough for the CPU interpreter:
- layout: the same values in other layouts (a transposed copy, a strided slice with poison in the gaps);
- rows: a prefix of the batch (1 row, half, all but one) that must give the same rows as the full batch;
- sizes: each dimension at 1, odd (17), and one either side of the power of two at or above the example's size
  (block boundaries: blocks are powers of two in practice); the first dimension (the batch) also at 0, an empty
  batch (an inner dimension of 0, a head of no channels, means nothing and is not tried);
- sentinel: a quarter of the integer entries set to the entry's own sentinel default (ignore_index=-100 ...);
- magnitude: values x100 (softmax/exp overflow) and shifted by -120 (exp underflow to 0, log(0) = -inf).
"""

from __future__ import annotations

from typing import Any

import torch

from .poison import fill_poison, original

SENTINEL_PARAMS = ("ignore_index", "padding_idx", "pad_token_id", "pad_id", "ignore_id")
MAGNITUDES = (("scale x100", 100.0, 0.0), ("shift -120", 1.0, -120.0))
MAX_SIZE_VARIANTS = 10


def _floating(x: Any) -> bool:
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def layouts(inputs: list[Any]) -> dict[str, list[Any]]:
    """Same values, other layouts: 'transposed' (rank >= 2) and 'strided' (every other element of a wider row)."""
    tensors = [x for x in inputs if isinstance(x, torch.Tensor) and x.numel() > 1]
    out: dict[str, list[Any]] = {}
    if any(t.dim() >= 2 and t.shape[-1] > 1 and t.shape[-2] > 1 for t in tensors):
        out["transposed"] = [x.transpose(-1, -2).contiguous().transpose(-1, -2)
                             if isinstance(x, torch.Tensor) and x.dim() >= 2 else x for x in inputs]

    def strided(x: torch.Tensor) -> torch.Tensor:
        big = original("empty")((*x.shape[:-1], 2 * x.shape[-1]), dtype=x.dtype, device=x.device)
        fill_poison(big)  # a kernel that ignores the stride reads the gaps: NaN (or the integer sentinel)
        view = big[..., ::2]
        view.copy_(x)
        return view

    if tensors and any(t.dim() >= 1 and t.shape[-1] > 1 and t.is_floating_point() for t in tensors):
        out["strided"] = [strided(x) if _floating(x) and x.dim() >= 1 and x.shape[-1] > 1 else x for x in inputs]
    return out


def batch_size(inputs: list[Any]) -> int | None:
    """The batch: the first dimension of the first tensor input of rank >= 2 (rank 1 has no rows to split)."""
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.dim() >= 2:
            return int(x.shape[0])
    return None


def row_prefixes(inputs: list[Any]) -> dict[str, tuple[int, list[Any]]]:
    """label -> (k, inputs with only the first k rows of every tensor whose first dimension is the batch)."""
    b = batch_size(inputs)
    if b is None or b < 2:
        return {}
    out = {}
    for k in sorted({1, b // 2, b - 1} - {0}):
        out[f"first {k} of {b} rows"] = (k, [x[:k].contiguous() if isinstance(x, torch.Tensor) and x.dim() >= 1
                                             and x.shape[0] == b else x for x in inputs])
    return out


def _pow2_at_or_above(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def boundary_shapes(shape: Any) -> dict[str, Any]:
    """label -> a case shape (tuple, or dict of sizes) with one dimension moved to a boundary size."""
    if isinstance(shape, dict):
        dims = [(k, v) for k, v in shape.items() if isinstance(v, int) and v > 0]
    elif isinstance(shape, (tuple, list)):
        dims = [(i, v) for i, v in enumerate(shape) if isinstance(v, int) and v > 0]
    else:
        return {}
    out: dict[str, Any] = {}
    for n, (key, size) in enumerate(dims):
        p = max(16, _pow2_at_or_above(size))
        for new in ((0,) if n == 0 else ()) + (1, 17, p - 1, p + 1):
            if new == size:
                continue
            s = dict(shape) if isinstance(shape, dict) else list(shape)
            s[key] = new
            label = f"shape {tuple(s) if not isinstance(s, dict) else s}"
            out.setdefault(label, s if isinstance(s, dict) else tuple(s))
    # the empty and single sizes of every dimension first: they are the cheapest and the likeliest to crash
    ranked = sorted(out.items(), key=lambda kv: (0 in _sizes(kv[1]) and 1 or 2, _numel(kv[1])))
    return dict(ranked[:MAX_SIZE_VARIANTS])


def moved_dim(example: Any, shape: Any) -> tuple[Any, int, int] | None:
    """(key, example size, new size) of the one dimension `shape` moved from `example`; None otherwise."""
    if isinstance(example, dict) and isinstance(shape, dict):
        pairs = [(k, example.get(k), shape.get(k)) for k in shape]
    elif isinstance(example, (tuple, list)) and isinstance(shape, (tuple, list)) and len(example) == len(shape):
        pairs = list(zip(range(len(shape)), example, shape))
    else:
        return None
    moved = [(k, a, b) for k, a, b in pairs if a != b and isinstance(a, int) and isinstance(b, int)]
    return moved[0] if len(moved) == 1 else None


def _sizes(shape: Any) -> list[int]:
    return list(shape.values()) if isinstance(shape, dict) else list(shape)


def _numel(shape: Any) -> int:
    n = 1
    for s in _sizes(shape):
        n *= max(1, int(s)) if isinstance(s, int) else 1
    return n


def with_sentinel(inputs: list[Any], value: int) -> list[Any] | None:
    """Integer tensor inputs with every fourth entry set to the sentinel; None when there is no integer tensor."""
    out, hit = [], False
    for x in inputs:
        if isinstance(x, torch.Tensor) and not x.is_floating_point() and x.dtype != torch.bool and x.numel():
            y = x.clone()
            y.view(-1)[::4] = value
            out.append(y)
            hit = True
        else:
            out.append(x)
    return out if hit else None


def magnitudes(inputs: list[Any]) -> dict[str, list[Any]]:
    """label -> floating inputs scaled or shifted (integers, indices, untouched)."""
    if not any(_floating(x) for x in inputs):
        return {}
    return {label: [x * scale + shift if _floating(x) else x for x in inputs] for label, scale, shift in MAGNITUDES}
