"""Memory traffic and tl.dot work of a candidate as Triton's CPU interpreter executes it, launch by launch.

For the duration of one `counting()` block we wrap three InterpreterBuilder methods (feature-detected; Triton 3.6
and 3.9 route tl.load, tl.store, block pointers and tensor descriptors through the same two):

* create_masked_load / create_masked_store: bytes = lanes whose mask is true x the element size. Masked-off lanes
  move nothing on the GPU either, so they are not counted. `requested` is every such byte: what the kernel asks the
  memory system for (L2 may serve rereads, so on the GPU the DRAM share can be lower). `unique` counts each address
  once per launch: the least any launch can move (every reread served by a cache).
* create_dot: 2 * M * N * K FLOPs per executed tl.dot (per program), by the precision the GPU would run it in
  (tf32, tf32x3 = three TF32 dots, ieee = fp32 FMA, bf16, fp16, fp8, int8).

Atomics and elementwise arithmetic are not counted: the figures rank memory traffic and tensor-core work, not time.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

UNIQUE_CAP = 32_000_000  # addresses kept per launch for `unique`; past it (256 MB of int64) unique is not known
_LOCK = threading.Lock()


@dataclass
class Launch:
    """One kernel launch: its grid, the bytes it loaded and stored, and its tl.dot FLOPs by precision."""

    kernel: str
    grid: tuple[int, int, int] = (1, 1, 1)
    load_bytes: int = 0
    store_bytes: int = 0
    dot_flops: dict[str, float] = field(default_factory=dict)
    _addrs: dict[int, list[np.ndarray]] = field(default_factory=dict)  # element size -> addresses touched
    _n_addrs: int = 0
    unique_bytes: int | None = None

    def touch(self, addrs: np.ndarray, size: int) -> None:
        """Remember the addresses a load or store touched (for `unique`), up to UNIQUE_CAP."""
        if self._n_addrs > UNIQUE_CAP:
            return
        self._n_addrs += addrs.size
        if self._n_addrs > UNIQUE_CAP:
            self._addrs.clear()
            return
        self._addrs.setdefault(size, []).append(addrs.astype(np.uint64, copy=False))

    def close(self) -> None:
        """Count the distinct addresses once the launch is over, and drop them."""
        if self._n_addrs > UNIQUE_CAP:
            self.unique_bytes = None
        else:
            self.unique_bytes = int(sum(np.unique(np.concatenate(parts)).size * size
                                        for size, parts in self._addrs.items() if parts))
        self._addrs = {}

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"kernel": self.kernel, "grid": list(self.grid), "load_bytes": self.load_bytes,
                "store_bytes": self.store_bytes, "unique_bytes": self.unique_bytes, "dot_flops": dict(self.dot_flops)}


class Counter:
    """Every launch of one counting() block."""

    def __init__(self) -> None:
        self.launches: list[Launch] = []

    def current(self) -> Launch:
        """The launch in progress (a load outside any launch opens an anonymous one)."""
        if not self.launches:
            self.launches.append(Launch("?"))
        return self.launches[-1]

    def totals(self) -> dict[str, Any]:
        """Sums over launches; unique_bytes is None when any launch's could not be counted."""
        flops: dict[str, float] = {}
        for la in self.launches:
            for k, v in la.dot_flops.items():
                flops[k] = flops.get(k, 0.0) + v
        uniq = [la.unique_bytes for la in self.launches]
        return {"launches": len(self.launches), "load_bytes": sum(la.load_bytes for la in self.launches),
                "store_bytes": sum(la.store_bytes for la in self.launches),
                "unique_bytes": None if any(u is None for u in uniq) else int(sum(u or 0 for u in uniq)),
                "dot_flops": flops}


def _elem_size(ptrs: Any) -> int:
    bits = int(getattr(ptrs.get_element_ty(), "primitive_bitwidth", 8) or 8)
    return max(1, bits // 8)


def _lanes(ptrs: Any, mask: Any) -> np.ndarray:
    """The addresses of the lanes that move data."""
    p = np.asarray(ptrs.data)
    m = np.broadcast_to(np.asarray(mask.data, dtype=bool), p.shape)
    return p[m]


def dot_precision(a: Any, b: Any, input_precision: Any, tl: Any) -> str:
    """The precision a tl.dot runs in on the GPU, from its operand types and input_precision."""
    a_ty = getattr(a.dtype, "scalar", a.dtype)
    if a_ty == tl.float32:
        name = getattr(input_precision, "name", None) or str(input_precision).rsplit(".", 1)[-1]
        name = str(name).lower()
        return name if name in ("tf32", "tf32x3", "ieee") else "tf32"
    if a_ty == tl.bfloat16:
        return "bf16"
    if a_ty == tl.float16:
        return "fp16"
    if getattr(a_ty, "primitive_bitwidth", 0) == 8:
        return "fp8" if a_ty.is_floating() else "int8"
    return "fp32"


@contextlib.contextmanager
def counting() -> Iterator[Counter]:
    """Count loads, stores and tl.dot FLOPs of every interpreted launch inside the block (one at a time)."""
    import triton.language as tl
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    executor = interpreter.GridExecutor
    counter = Counter()
    orig_load, orig_store = builder.create_masked_load, builder.create_masked_store
    orig_dot, orig_call = builder.create_dot, executor.__call__

    def create_masked_load(self: Any, ptrs: Any, mask: Any, other: Any, *a: Any, **k: Any) -> Any:
        lanes, size = _lanes(ptrs, mask), _elem_size(ptrs)
        la = counter.current()
        la.load_bytes += lanes.size * size
        la.touch(lanes, size)
        return orig_load(self, ptrs, mask, other, *a, **k)

    def create_masked_store(self: Any, ptrs: Any, value: Any, mask: Any, *a: Any, **k: Any) -> Any:
        lanes, size = _lanes(ptrs, mask), _elem_size(ptrs)
        la = counter.current()
        la.store_bytes += lanes.size * size
        la.touch(lanes, size)
        return orig_store(self, ptrs, value, mask, *a, **k)

    def create_dot(self: Any, a: Any, b: Any, d: Any, input_precision: Any, *rest: Any) -> Any:
        sa, sb = np.shape(a.data), np.shape(b.data)
        flops = 2.0 * float(np.prod(sa[:-1])) * float(sa[-1]) * float(sb[-1])
        prec = dot_precision(a, b, input_precision, tl)
        la = counter.current()
        la.dot_flops[prec] = la.dot_flops.get(prec, 0.0) + flops
        return orig_dot(self, a, b, d, input_precision, *rest)

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        counter.launches.append(Launch(getattr(self.fn, "__name__", "?")))
        grid_dim = builder.set_grid_dim
        la = counter.launches[-1]

        def set_grid_dim(b: Any, nx: int, ny: int, nz: int) -> Any:
            la.grid = (int(nx), int(ny), int(nz))
            return grid_dim(b, nx, ny, nz)

        builder.set_grid_dim = set_grid_dim
        try:
            return orig_call(self, *args, **kwargs)
        finally:
            builder.set_grid_dim = grid_dim
            la.close()

    if not _LOCK.acquire(blocking=False):  # one counting block at a time; a nested one would count twice
        raise RuntimeError("interp_traffic.counting() is already active")
    try:
        builder.create_masked_load, builder.create_masked_store = create_masked_load, create_masked_store
        builder.create_dot, executor.__call__ = create_dot, call
        yield counter
    finally:
        builder.create_masked_load, builder.create_masked_store = orig_load, orig_store
        builder.create_dot, executor.__call__ = orig_dot, orig_call
        _LOCK.release()
        for la in counter.launches:  # an anonymous launch (loads outside a grid) closes here
            if la.unique_bytes is None and la._n_addrs <= UNIQUE_CAP:
                la.close()
