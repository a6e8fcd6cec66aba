"""Roofline figures for run_benchmark: bytes and FLOPs of one case, declared by the reference or counted.

A reference may declare `BYTES(case, inputs)` and `FLOPS(case, inputs)` (references/task-format.md). A KernelBench
file or a user's model declares neither, so the figures are counted from the reference itself: FLOPs with
torch.utils.flop_counter.FlopCounterMode during the one reference call the benchmark makes anyway (it counts
matmul, convolution and attention FLOPs; elementwise work counts as 0, which makes the case memory-bound), bytes
as inputs read once + outputs written once + an nn.Module's parameters and buffers read once. The implausibility
floor (peaks.plausibility_flags) needs the read/write split, so both are kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ..validation.nest import tensors_in


@dataclass
class Work:
    """What one call of the reference must do at least: bytes moved and FLOPs, with where each came from."""

    read_bytes: float
    write_bytes: float
    flops: float | None  # None: no matmul/conv/attention work (memory-bound), or not countable
    bytes_source: str  # "declared" (BYTES) or "counted" (inputs + outputs [+ parameters])
    flops_source: str | None  # "declared" (FLOPS), "counted" (FlopCounterMode), or None

    @property
    def bytes(self) -> float:
        """Total bytes moved (the figure GB/s divides)."""
        return self.read_bytes + self.write_bytes


def nbytes(value: Any) -> int:
    """Bytes of every tensor in a (nested) value, each distinct storage view counted once."""
    seen: set[tuple[int, int, tuple[int, ...]]] = set()
    total = 0
    for t in tensors_in(value):
        key = (t.data_ptr() if t.device.type != "meta" else id(t), t.dtype.itemsize, tuple(t.shape))
        if key in seen:  # the same tensor passed twice is read once
            continue
        seen.add(key)
        total += t.numel() * t.element_size()
    return total


def module_bytes(model: Any) -> int:
    """Parameters and buffers of an nn.Module (a KernelBench Model reads its weights once per call)."""
    if not isinstance(model, torch.nn.Module):
        return 0
    return nbytes(list(model.parameters()) + list(model.buffers()))


def call_counting_flops(fn: Callable[..., Any], inputs: list[Any]) -> tuple[Any, float]:
    """Call fn(*inputs) once under FlopCounterMode; (its output, the FLOPs counted)."""
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        out = fn(*inputs)
    return out, float(counter.get_total_flops())


def count_flops(fn: Callable[..., Any], inputs: list[Any]) -> float:
    """FLOPs of one reference call, counted by FlopCounterMode (matmul, conv, attention; 2 per multiply-add)."""
    return call_counting_flops(fn, inputs)[1]


def work_of(ref_mod: Any, case: Any, inputs: list[Any], outputs: Any, counted_flops: float | None,
            model: Any = None) -> Work:
    """The case's bytes and FLOPs: the reference's BYTES/FLOPS when it declares them, else counted."""
    bytes_fn, flops_fn = getattr(ref_mod, "BYTES", None), getattr(ref_mod, "FLOPS", None)
    read = float(nbytes(inputs) + module_bytes(model))
    write = float(nbytes(outputs))
    if callable(bytes_fn):
        # A declared total: its read/write split is unknown, so the floor treats it all as reads (the more
        # lenient bound: reads run at least as fast as a copy).
        read, write, bytes_source = float(bytes_fn(case, inputs)), 0.0, "declared"
    else:
        bytes_source = "counted"
    if callable(flops_fn):
        flops, flops_source = float(flops_fn(case, inputs)), "declared"
    elif counted_flops:
        flops, flops_source = float(counted_flops), "counted"
    else:
        flops, flops_source = None, ("counted" if counted_flops is not None else None)
    return Work(read, write, flops, bytes_source, flops_source)
