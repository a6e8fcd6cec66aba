"""KernelBench sizes: the module-level integers a problem's get_inputs()/get_init_inputs() read, how to set them,
what they cost (fake tensors), the relations among them a variant must keep, and how to shrink them.

cases.py asks this module for sizes; nothing here builds a case.
"""

from __future__ import annotations

import contextlib
import inspect
import math
import re
import types
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import torch

from .nest import tensors_in as _tensors
from .tasks import TaskError

# The interpreter costs per operation and program: 64 Ki elements (inputs + outputs) keep an elementwise or
# reduction problem at a few seconds per case; the largest dimension stays <= 512 so BLOCK-sized loops still run.
CPU_MAX_ELEMS, CPU_MAX_DIM = 1 << 16, 512
# GPU: the full size runs first; layout and odd variants run on a medium copy (seconds, not minutes, and a
# fraction of the full size's memory), small/1/0 variants on a tiny one.
GPU_MEDIUM_ELEMS, GPU_MEDIUM_DIM = 1 << 22, 4096
SMALL_ELEMS, SMALL_DIM = 1 << 12, 64
VARY_MIN = 8  # constants below this are structure (a reduction axis, kernel_size 3, 3 input channels), not sizes
STRUCTURAL = re.compile(r"kernel|stride|pad|dilation|group|axis|eps", re.I)


# ---- size constants ------------------------------------------------------------------------------------------
def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _split_key(key: str) -> tuple[str, int | None]:
    m = re.fullmatch(r"([A-Za-z_]\w*)\[(\d+)\]", key)
    return (m.group(1), int(m.group(2))) if m else (key, None)


def _ints_of(name: str, value: Any) -> dict[str, int]:
    if _is_int(value):
        return {name: int(value)}
    if isinstance(value, (tuple, list)) and value and all(_is_int(e) for e in value):
        return {f"{name}[{i}]": int(e) for i, e in enumerate(value)}  # e.g. input_shape = (4096,)
    return {}


def _globals_read(mod: ModuleType, roots: list[Any]) -> list[str]:
    """Global names the code of `roots` reads, in order of first use, following the module's own helper functions
    and nested code (comprehensions, lambdas)."""
    order: list[str] = []
    seen: set[int] = set()

    def visit(code: types.CodeType) -> None:
        if id(code) in seen:
            return
        seen.add(id(code))
        for name in code.co_names:
            if name not in order:
                order.append(name)
        for name in code.co_names:  # helpers after the function's own names: get_inputs' order comes first
            obj = vars(mod).get(name)
            if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                visit(obj.__code__)
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                visit(c)

    for fn in roots:
        code = getattr(fn, "__code__", None)
        if isinstance(code, types.CodeType):
            visit(code)
    return order


def size_constants(mod: ModuleType) -> dict[str, int]:
    """The problem's sizes: module-level integers (and integer-tuple elements, as 'name[i]') that get_inputs() or
    get_init_inputs() read, found from their bytecode, in order of first use (batch_size before dim)."""
    roots = [getattr(mod, n) for n in ("get_inputs", "get_init_inputs") if callable(getattr(mod, n, None))]
    out: dict[str, int] = {}
    for name in _globals_read(mod, roots):
        if name in vars(mod) and not name.startswith("__"):
            out.update(_ints_of(name, vars(mod)[name]))
    return out


def module_ints(mod: ModuleType) -> dict[str, int]:
    """Every module-level integer (and integer-tuple element) of the problem: what `sizes` may override."""
    out: dict[str, int] = {}
    for name, value in vars(mod).items():
        if not name.startswith("_") and not isinstance(value, ModuleType):
            out.update(_ints_of(name, value))
    return out


def check_sizes(mod: ModuleType, sizes: dict[str, Any] | None, where: str = "sizes") -> dict[str, int]:
    """Validated overrides {name: int}; an unknown name or a bad value is a usage error naming the known sizes."""
    known, allowed = size_constants(mod), module_ints(mod)
    out: dict[str, int] = {}
    for name, value in (sizes or {}).items():
        if name not in allowed:
            others = sorted(set(allowed) - set(known))
            raise TaskError("inputs", f"{where}: {name!r} is not a size of this KernelBench problem; its sizes (module-"
                            f"level integers read by get_inputs/get_init_inputs) are {fmt(known) or 'none'}"
                            + (f"; other module-level integers: {', '.join(others)}" if others else ""), usage=True)
        if not _is_int(value) and not (isinstance(value, str) and value.isdigit()):
            raise TaskError("inputs", f"{where}: {name} must be a non-negative integer, got {value!r}", usage=True)
        if int(value) < 0:
            raise TaskError("inputs", f"{where}: {name} must be a non-negative integer, got {value!r}", usage=True)
        out[name] = int(value)
    return out


def fmt(sizes: dict[str, int]) -> str:
    """'a=1, b=2' for a report."""
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def set_sizes(mod: ModuleType, originals: dict[str, Any], sizes: dict[str, int]) -> None:
    """Module globals back to their originals, then `sizes` on top (tuple elements rebuilt as tuples)."""
    for name, value in originals.items():
        setattr(mod, name, value)
    for key, value in sizes.items():
        name, idx = _split_key(key)
        if name not in originals:
            originals[name] = getattr(mod, name)
        if idx is None:
            setattr(mod, name, int(value))
        else:
            items = list(getattr(mod, name))
            items[idx] = int(value)
            setattr(mod, name, type(originals[name])(items) if isinstance(originals[name], list) else tuple(items))


@contextlib.contextmanager
def sized(mod: ModuleType, sizes: dict[str, int]) -> Iterator[None]:
    """Run with the problem's module-level sizes temporarily overridden (restored afterwards, also on errors)."""
    originals: dict[str, Any] = {}
    try:
        set_sizes(mod, originals, sizes)
        yield
    finally:
        for name, value in originals.items():
            setattr(mod, name, value)


def footprint(mod: ModuleType, sizes: dict[str, int]) -> tuple[int | None, bool | None]:
    """(elements of inputs + outputs, whether the reference accepted these sizes) from fake tensors: nothing is
    allocated, so an 8 GB problem costs nothing. (None, None) when the inputs cannot be built fake; accepted is
    None when the reference cannot run on fake tensors at all."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with sized(mod, sizes):
        try:
            with FakeTensorMode(allow_non_fake_inputs=True), torch.no_grad():
                inputs = list(mod.get_inputs())
                n = sum(t.numel() for t in _tensors(inputs))
                try:
                    model = mod.Model(*list(getattr(mod, "get_init_inputs", list)()))
                    n += sum(t.numel() for t in _tensors(model(*inputs)))
                    return n, True
                except Exception:  # noqa: BLE001 - a shape the reference rejects, or an op with no fake kernel
                    return n, False
        except Exception:  # noqa: BLE001
            return None, None


# ---- automatic sizes -------------------------------------------------------------------------------------------
def varied(consts: dict[str, int], pinned: dict[str, int]) -> list[str]:
    """The constants the automatic sizes change: sizes (>= 8, not kernel/stride/padding/...), not pinned by the user."""
    return [k for k, v in consts.items() if v >= VARY_MIN and k not in pinned and not STRUCTURAL.search(_split_key(k)[0])]


def shrink(mod: ModuleType, start: dict[str, int], vary: list[str], max_elems: int, max_dim: int,
           floor: int = 4) -> dict[str, int]:
    """Halve the largest varied size until inputs + outputs fit `max_elems` and no varied size exceeds `max_dim`;
    a halving the reference rejects (on fake tensors) freezes that constant instead. Ratios stay roughly the same
    because the largest is always halved first, and get_init_inputs is re-read at every step."""
    cur = dict(start)
    est, ok0 = footprint(mod, cur)
    frozen: set[str] = set()
    for _ in range(256):
        free = [k for k in vary if k not in frozen and cur[k] > floor]
        too_wide = [k for k in free if cur[k] > max_dim]
        n = est if est is not None else math.prod(max(1, cur[k]) for k in vary)
        if not free or (n <= max_elems and not too_wide):
            break
        k = max(too_wide or free, key=lambda name: cur[name])
        trial = {**cur, k: max(floor, (cur[k] + 1) // 2)}
        t_est, t_ok = footprint(mod, trial)
        if ok0 and not t_ok:
            frozen.add(k)  # e.g. embed_dim no longer divisible by num_heads, or smaller than a kernel
            continue
        cur, est = trial, t_est
    return cur


LONG_FROM = 256  # sizes at least this big in the problem get a long_<size> variant
LONG_DIM = 333  # odd, over two blocks of 128 and not a multiple of any power of two


def oddify(sizes: dict[str, int], vary: list[str]) -> dict[str, int]:
    """Every varied size made odd (and so no power of two): 512 -> 511, 16 -> 15."""
    return {**sizes, **{k: sizes[k] - 1 for k in vary if sizes[k] > 2 and sizes[k] % 2 == 0}}

