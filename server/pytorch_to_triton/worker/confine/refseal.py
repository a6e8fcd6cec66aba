"""The reference module as imported, sealed before any candidate code runs; checked (and restored) with the harness's
own functions after the candidate's import and after every candidate call (guards.PatchWatch.check_and_restore).

A candidate shares the worker's process with the reference, so it can reach the reference's module through
sys.modules or gc and make it agree with anything, or make the baseline slow: rebind a name in the module
(`ref.reference = ...`, `ref.torch = fake`), swap a function's code, defaults or closure, or a class's method
(KernelBench's Model.forward). The seal records the identity of every module-level value, and of each function's
code, defaults and closure cells, and every attribute of the classes the module defines. In-place mutation of a
mutable value (a list constant, a tensor, a buffer) is not covered: references/sandbox.md says so.
"""

from __future__ import annotations

import types
from typing import Any

_FN_PARTS = ("__code__", "__defaults__", "__kwdefaults__")


def _fn_state(fn: types.FunctionType) -> tuple[Any, ...]:
    cells = tuple(c.cell_contents if _cell_full(c) else _EMPTY for c in fn.__closure__ or ())
    return (*(getattr(fn, p) for p in _FN_PARTS), cells)


class _Empty:
    pass


_EMPTY = _Empty()


def _cell_full(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


class Seal:
    """Identities of a module's values, its functions' internals and its classes' attributes."""

    def __init__(self, mod: types.ModuleType):
        self.mod = mod
        self.name = mod.__name__.split("_", 2)[-1] if mod.__name__.startswith("p2t_") else mod.__name__
        # Only what is code: functions, classes, modules, callables. Plain values (KernelBench's size constants, which
        # the harness itself overrides; a cache the reference keeps) may change between calls.
        self.values = {k: v for k, v in vars(mod).items()
                       if (callable(v) or isinstance(v, types.ModuleType)) and not k.startswith("__")}
        self.functions: dict[str, tuple[types.FunctionType, tuple[Any, ...]]] = {}
        self.classes: dict[str, tuple[type, dict[str, Any]]] = {}
        for key, val in self.values.items():
            if isinstance(val, types.FunctionType):
                self.functions[key] = (val, _fn_state(val))
            elif isinstance(val, type) and getattr(val, "__module__", None) == mod.__name__:
                attrs = dict(vars(val))
                self.classes[key] = (val, attrs)
                for k, v in attrs.items():
                    if isinstance(v, types.FunctionType):
                        self.functions[f"{key}.{k}"] = (v, _fn_state(v))

    def check_and_restore(self) -> list[str]:
        """What changed since the seal (as '<module>.<name>'), each put back."""
        changed: list[str] = []
        live = vars(self.mod)
        for k, v in self.values.items():
            if live.get(k) is not v:
                changed.append(f"{self.name}.{k}")
                live[k] = v
        for key, (cls, attrs) in self.classes.items():
            now = vars(cls)
            for k, v in attrs.items():
                if now.get(k) is not v and k not in ("__dict__", "__weakref__", "__doc__"):
                    changed.append(f"{self.name}.{key}.{k}")
                    setattr(cls, k, v)
        for key, (fn, state) in self.functions.items():
            now = _fn_state(fn)
            if len(now) == len(state) and all(a is b for a, b in zip(now[:3], state[:3])) and all(
                    a is b for a, b in zip(now[3], state[3])):
                continue
            changed.append(f"{self.name}.{key}.__code__/defaults/closure")
            for part, val in zip(_FN_PARTS, state[:3]):
                setattr(fn, part, val)
            for cell, val in zip(fn.__closure__ or (), state[3]):
                if val is not _EMPTY:
                    cell.cell_contents = val
        return changed


_CURRENT: list[Seal] = []


def seal(mod: types.ModuleType) -> None:
    """Seal the reference just imported (before the candidate is); replaces the previous task's seal."""
    _CURRENT[:] = [Seal(mod)]


def check_and_restore() -> list[str]:
    """What the candidate changed in the sealed reference, restored (empty when nothing was sealed)."""
    return _CURRENT[0].check_and_restore() if _CURRENT else []


def forget() -> None:
    """Drop the seal at the end of a call (the reference module is released with it)."""
    _CURRENT.clear()
