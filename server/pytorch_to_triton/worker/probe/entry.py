"""The audited entry and its module: which function the probes call, its line in the file, the example's shape, and
the compiled kernels forgotten between runs."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ..validation.tasks import TaskError, load_module, resolve_candidate_entry, resolve_reference_entry


def _entry_module(entry: Any) -> Any:
    """The module an entry was defined in (an autograd Function's `apply`: its class's)."""
    owner = getattr(entry, "__self__", None)
    name = owner.__module__ if isinstance(owner, type) else getattr(inspect.unwrap(entry), "__module__", None)
    return sys.modules.get(name or "")


def _forget_compiled(entry: Any) -> bool:
    """Drop the compiled kernels that the @triton.jit functions of the entry's module keep in memory (through an
    autotuner's or heuristics' .fn), so the next launch compiles again under the current settings; False when this
    Triton keeps them elsewhere (no `device_caches`)."""
    from .probe_lines import jit_chain

    mod = _entry_module(entry)
    found = False
    for obj in list(vars(mod).values()) if mod is not None else []:
        caches = next((c for o in jit_chain(obj) if isinstance(c := getattr(o, "device_caches", None), dict)), None)
        if caches is not None:
            caches.clear()
            found = True
    return found


def _entry_line(entry: Any, target: Path) -> int:
    """The def line of the entry in the audited file (an autograd Function's `apply`: its `forward`); 0 when the
    entry's code is not in that file (torch's own Function.apply lives in torch)."""
    owner = getattr(entry, "__self__", None)
    obj = owner.forward if isinstance(owner, type) and issubclass(owner, torch.autograd.Function) else entry
    try:
        obj = inspect.unwrap(obj)
        src = inspect.getsourcefile(obj)
        if src is None or Path(src).resolve() != target.resolve():
            return 0
        return inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return 0


# ---- loading -------------------------------------------------------------------------------------------------
def _entry(target: Path, harness: Path, h_mod: Any, entry: str | None) \
        -> tuple[Callable[..., Any], Any, Callable[..., Any] | None]:
    """(entry, harness module, reference or None) of a harness in the task format (make_inputs)."""
    if not callable(getattr(h_mod, "make_inputs", None)):
        raise TaskError("import", f"{harness.name} has no make_inputs(case) and is not in KernelBench form (Model, "
                        "get_inputs); an audit harness is the entry's example call in the task format "
                        "(references/audit-guide.md, 'Probes')", usage=True)
    t_mod = h_mod if target.resolve() == harness.resolve() else load_module(target, "target")
    name = entry or getattr(h_mod, "ENTRY", None)
    ref = getattr(h_mod, "reference", None) if h_mod is not t_mod else None
    if isinstance(name, str):
        fn = getattr(t_mod, name, None)
        if not callable(fn):
            raise TaskError("import", f"{target.name} has no function {name!r} (the audit entry)", usage=True)
        return fn, h_mod, ref if callable(ref) else None
    if callable(getattr(h_mod, "entry", None)):
        return h_mod.entry, h_mod, ref if callable(ref) else None
    ref_name = resolve_reference_entry(h_mod, None)  # a task reference as the harness: the candidate's entry
    return getattr(t_mod, resolve_candidate_entry(t_mod, None, ref_name)), h_mod, getattr(h_mod, ref_name)


def _example_shape(h_mod: Any, shape: Any) -> Any:
    if shape is not None:
        return tuple(shape) if isinstance(shape, list) else shape
    shapes = getattr(h_mod, "AUDIT_SHAPE", None) or getattr(h_mod, "SHAPES", None)
    if isinstance(shapes, dict) and shapes and not all(isinstance(v, int) for v in shapes.values()):
        return next(iter(shapes.values()))
    if shapes is None:
        raise TaskError("inputs", "no example shape: give the harness AUDIT_SHAPE = (...) or SHAPES, or the sidecar "
                        "[audit] shape = [...]", usage=True)
    return shapes


def _value_order(v: Any) -> tuple[str, Any]:
    return (type(v).__name__, v if isinstance(v, (int, float)) else str(v))
