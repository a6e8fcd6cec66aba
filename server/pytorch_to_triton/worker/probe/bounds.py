"""The interpreter's bounds check: every load and store a kernel makes must fall inside one of its launch's tensors.

A GPU reports such an access as an illegal memory access (or silently reads a neighbour's bytes); Triton's CPU
interpreter reads and writes raw host memory without any check, so a kernel that loads `logits[target]` with
`target == ignore_index == -100` passes there. While `BOUNDS.active` is set (audit probes only), the interpreter's
masked load/store (plain load/store go through them too) compare every enabled lane's address with the byte ranges
of the launch's tensor storages and raise OutOfBounds naming the lane, the program and the nearest tensor.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np


class OutOfBounds(RuntimeError):
    """A kernel touched memory outside every tensor of its launch (an illegal memory access on a GPU)."""


@dataclass
class BoundsState:
    """Whether the check is on, and the storages (start, end, name) of the launch in progress."""

    active: bool = False
    ranges: list[tuple[int, int, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


BOUNDS = BoundsState()
_INSTALLED: dict[str, Any] = {}


def _storages(args: list[Any], names: list[str]) -> list[tuple[int, int, str]]:
    out = []
    for name, a in zip(names, args, strict=False):
        if hasattr(a, "untyped_storage"):
            s = a.untyped_storage()
            out.append((int(s.data_ptr()), int(s.data_ptr()) + int(s.nbytes()), name))
    return out


def _check(kind: str, ptrs: Any, mask: Any, itemsize: int) -> None:
    if not BOUNDS.active or not BOUNDS.ranges:
        return
    p = np.asarray(ptrs.data, dtype=np.uint64).reshape(-1)
    m = np.asarray(mask.data, dtype=bool).reshape(-1) if mask is not None else np.ones(p.shape, bool)
    if m.shape != p.shape:
        m = np.broadcast_to(m, p.shape)
    on = p[m]
    if on.size == 0:
        return
    ok = np.zeros(on.shape, dtype=bool)
    for lo, hi, _ in BOUNDS.ranges:
        ok |= (on >= lo) & (on + itemsize <= hi)
    if ok.all():
        return
    bad = int(on[~ok][0])
    lo, hi, name = min(BOUNDS.ranges, key=lambda r: min(abs(bad - r[0]), abs(bad - r[1])))
    where = (f"{(lo - bad) // itemsize} element(s) before" if bad < lo else
             f"{(bad - hi) // itemsize + 1} element(s) past the end of")
    from triton.runtime import interpreter

    pid = getattr(interpreter.interpreter_builder, "grid_idx", None)
    raise OutOfBounds(f"out-of-bounds {kind}: {int((~ok).sum())} enabled lane(s), the first {where} `{name}` "
                      f"(program {tuple(pid) if pid is not None else '?'}); on a GPU this is an illegal memory access")


def install() -> bool:
    """Wrap the interpreter's masked load/store and its launch (idempotent); False when Triton has no interpreter."""
    if _INSTALLED:
        return True
    try:
        from triton.runtime import interpreter as it
    except Exception:  # noqa: BLE001 - no interpreter, no check
        return False
    builder = type(it.interpreter_builder)
    load, store, call = builder.create_masked_load, builder.create_masked_store, it.GridExecutor.__call__

    def create_masked_load(self: Any, ptrs: Any, mask: Any, other: Any, *a: Any) -> Any:
        _check("load", ptrs, mask, np.dtype(it._get_np_dtype(ptrs.get_element_ty())).itemsize)
        return load(self, ptrs, mask, other, *a)

    def create_masked_store(self: Any, ptrs: Any, value: Any, mask: Any, *a: Any) -> Any:
        _check("store", ptrs, mask, np.dtype(it._get_np_dtype(ptrs.get_element_ty())).itemsize)
        return store(self, ptrs, value, mask, *a)

    def grid_call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not BOUNDS.active:
            return call(self, *args, **kwargs)
        init = self._init_args_hst

        def init_and_record(args_dev: Any, kw: Any) -> Any:
            hst, kw_hst = init(args_dev, kw)
            BOUNDS.ranges = _storages(list(hst) + list(kw_hst.values()), list(self.arg_names) + list(kw_hst))
            return hst, kw_hst

        self._init_args_hst = init_and_record
        try:
            return call(self, *args, **kwargs)
        finally:
            del self._init_args_hst
            BOUNDS.ranges = []

    builder.create_masked_load, builder.create_masked_store = create_masked_load, create_masked_store
    it.GridExecutor.__call__ = grid_call
    _INSTALLED.update(load=load, store=store, call=call)
    return True
