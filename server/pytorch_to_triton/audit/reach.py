"""What runs: the host functions and kernels reachable from the audit's entry (issue 40: the audit follows what runs).

The entry is `ModelNew.forward` for a KernelBench-form candidate, else the harness's or the sidecar's `entry`. From
it the walk follows calls of the file's own functions, `Cls.apply` (its forward and backward), modules a reached
`__init__` builds (`self.act = NewGELU()`: their `forward`, and `__init__`), and kernel launches with the @jit
helpers they call. Code the entry never reaches (a helper class copied from the problem, a file's test) gets at most
a note: `demote` turns its findings into P2 notes saying so.
"""

from __future__ import annotations

import ast

from .model import AuditReport
from .names import dotted
from .structure import _NOT_PRODUCT, FileModel


def roots(model: FileModel, entry: str | None, candidate: bool = True) -> list[str]:
    """The entry's qualnames in the file: `entry` (a function, `Cls` for its forward, or `Cls.method`), else
    ModelNew's forward; [] when the file shows neither (then every function counts as reached).

    A benchmark candidate is what its entry runs. A library file (not a candidate) audited through one entry has
    other callers too: its public functions and modules are roots beside the entry (the harness only picks the
    example call), so only code no public function reaches (dead helpers, the file's own tests) gets notes."""
    out: list[str] = []
    if entry:
        cls = entry.split(".")[0]
        if entry in model.funcs:
            out = [entry]
        elif cls in model.classes:
            out = [q for q in (f"{cls}.forward", f"{cls}.__init__", entry) if q in model.funcs]
        else:
            out = [q for q in model.funcs if q.split(".")[-1] == entry.split(".")[-1]][:1]
    elif "ModelNew" in model.classes:
        out = [q for q in ("ModelNew.forward", "ModelNew.__init__") if q in model.funcs]
    if out and not candidate and "ModelNew" not in model.classes:
        out += [q for q, f in model.funcs.items() if _public(q)]
    return out


def _public(q: str) -> bool:
    """A public function or method of a public class (not a test, benchmark or main)."""
    parts = q.split(".")
    return not any(p.startswith("_") and not p.startswith("__") for p in parts) and \
        not _NOT_PRODUCT.match(parts[-1]) and not (len(parts) > 1 and _NOT_PRODUCT.match(parts[0]))


def reachable(model: FileModel, start: list[str]) -> set[str]:
    """Qualnames of host functions and names of kernels reachable from `start`."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        q = todo.pop()
        if q in seen:
            continue
        seen.add(q)
        if q in model.kernels:
            todo += list(model.kernel_calls(model.kernels[q]))
            continue
        fn = model.funcs.get(q)
        if fn is None:
            continue
        todo += [callee for callee, _ in fn.calls]
        todo += [ln.kernel for ln in fn.launches]
        if q.endswith(".forward") and fn.cls and f"{fn.cls}.backward" in model.funcs:
            todo.append(f"{fn.cls}.backward")  # Cls.apply's backward runs when autograd does
        for node in ast.walk(fn.node):  # modules built here (self.act = NewGELU()) run their forward when called
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in model.classes:
                todo += [m for m in (f"{node.func.id}.forward", f"{node.func.id}.__init__",
                                     f"{node.func.id}.__call__") if m in model.funcs]
            elif isinstance(node, ast.Name) and node.id in model.funcs:  # a function passed by name (a callback)
                todo.append(node.id)
            elif isinstance(node, ast.Call) and dotted(node.func) in model.kernels:
                todo.append(dotted(node.func))
    return seen


def demote(report: AuditReport, model: FileModel, entry: str | None, candidate: bool = True) -> list[str]:
    """Findings in functions or kernels the entry never reaches become P2 notes (issue 40); returns the unreached
    names (for the report's not_checked)."""
    start = roots(model, entry, candidate)
    if not start:
        return []
    reached = reachable(model, start)
    known = set(model.funcs) | set(model.kernels)
    unreached = sorted(known - reached)
    if not unreached:
        return []
    where = start[0] if candidate or len(start) == 1 else f"{start[0]} or the file's public functions"
    for f in report.findings + report.host_code:
        fn = f.function or _enclosing(model, f.line)
        if fn is None or fn not in known or fn in reached:
            continue
        if f.severity in ("P0", "P1"):
            f.severity = "P2"
        f.why = (f"note: {fn} is not reached from {where} (the entry): defined but never run by it, so this is "
                 f"no problem of what runs. {f.why}")
    return unreached


def _enclosing(model: FileModel, line: int) -> str | None:
    """The function or kernel whose def spans `line` (the innermost)."""
    best: tuple[int, str] | None = None
    for name, node in [(q, f.node) for q, f in model.funcs.items()] + [(k, d.node) for k, d in model.kernels.items()]:
        end = getattr(node, "end_lineno", node.lineno) or node.lineno
        if node.lineno <= line <= end and (best is None or node.lineno > best[0]):
            best = (node.lineno, name)
    return best[1] if best else None
