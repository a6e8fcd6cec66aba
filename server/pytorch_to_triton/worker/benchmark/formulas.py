"""BYTES/FLOPS formulas from a task sidecar ([bench] bytes = "...", flops = "..."), evaluated in the worker.

The server checked the expression's names (sidecar.check_formula); here it becomes the reference module's
BYTES(case, inputs) / FLOPS(case, inputs), so run_benchmark's roofline code needs no other change. Sizes are read
from the module when the formula runs, so size overrides applied to the module are seen.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from types import ModuleType
from typing import Any

import torch

from ..validation.tasks import TaskError


def _numel(t: Any) -> int:
    return int(t.numel()) if isinstance(t, torch.Tensor) else 1


def _nbytes(t: Any) -> int:
    if isinstance(t, torch.Tensor):
        return int(t.numel() * t.element_size())
    if isinstance(t, (list, tuple)):
        return sum(_nbytes(x) for x in t)
    return 0


HELPERS: dict[str, Any] = {
    "numel": _numel, "nbytes": _nbytes, "prod": math.prod, "sum": sum, "min": min, "max": max, "len": len,
    "abs": abs, "int": int, "float": float, "ceil": math.ceil, "floor": math.floor, "log2": math.log2,
    "sqrt": math.sqrt,
}


def formula(expr: str, ref_mod: ModuleType, what: str) -> Callable[[Any, Any], float]:
    """A (case, inputs) -> float function for one expression over the module's sizes."""
    code = compile(expr, f"<sidecar {what}>", "eval")

    def fn(case: Any, inputs: Any) -> float:
        ns: dict[str, Any] = {k: v for k, v in vars(ref_mod).items()
                              if not k.startswith("_") and isinstance(v, (int, float)) and not isinstance(v, bool)}
        # One dict as globals: names inside a generator expression resolve there too.
        ns.update(HELPERS)
        ns.update({"__builtins__": {}, "inputs": list(inputs), "case": case})
        try:
            return float(eval(code, ns))  # noqa: S307 - the assistant's own expression, in the worker, like its code
        except Exception as e:  # noqa: BLE001 - the sidecar's mistake, said as such (a usage error, not a crash)
            raise TaskError("inputs", f"task sidecar [bench] {what} = {expr!r} failed: {type(e).__name__}: {e}; "
                            "fix the formula (references/task-format.md, 'The task sidecar')", usage=True) from None

    return fn


def install(ref_mod: ModuleType, args: dict[str, Any]) -> None:
    """Set ref_mod.BYTES / ref_mod.FLOPS from args['bytes_expr'] / args['flops_expr'] when the sidecar gave them."""
    for key, attr in (("bytes_expr", "BYTES"), ("flops_expr", "FLOPS")):
        expr = args.get(key)
        if expr:
            setattr(ref_mod, attr, formula(str(expr), ref_mod, attr.lower()))
