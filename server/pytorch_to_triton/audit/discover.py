"""Where the probes' example call comes from when none is given (issue 45, part 3): the search, in order. Server side,
the AST only: nothing here imports or runs the user's code.

1. A harness beside the file: the sidecar's `[audit] harness` and the folder's task reference (probe_plan.py), or a
   KernelBench-form problem in the folder (Model, get_inputs, get_init_inputs) when the file defines ModelNew.
2. The file's own callers: `test_*` functions (pytest style: of each parametrization, the smallest option), its
   script code (module-level calls, the `if __name__ == "__main__":` block), its benchmarks (`triton.testing.
   perf_report` functions, whose smallest x_vals the worker picks; `bench*` functions), its docstring examples
   (`>>>` lines).
3. The package's callers: files of the package and of its test folders that import one of the file's entries and
   call it (their tests, scripts, docstrings), then those that call it through a wrapper of the package (a function
   or module of another file that calls the entry with the inputs it builds).

The worker (worker/probe/callers.py) runs the candidates in this order and records the first call of one of the
file's kernel-launching functions (`Found.entries`): that call, as the caller makes it, is the probes' example. A
candidate found but unusable as it stands (a test whose arguments are pytest fixtures) carries `why_not` and is
named in the report, not run. request_for() finds one candidate again for a reproducer's --caller (probe_repro.py,
run outside the server). The callers inside one file are caller_sources.py's (their arguments and references:
caller_args.py), those in the package's other files package_callers.py's; this module orders them.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .caller_sources import Callers, Source, has_call, module_name, refs
from .imports import follow, package_root
from .names import dotted
from .package_callers import MAX_BYTES, package_callers
from .structure import _NOT_PRODUCT, FileModel

MAX_TRIED = 8  # candidates the worker tries, in order, before it says none was usable
# (a sidecar's [audit] harness and a task reference come first, probe_plan.py; a KernelBench problem is run as one)
KINDS = ("kernelbench", "test", "main", "benchmark", "docstring", "package_wrapper")


@dataclass
class Found:
    """The search's result: candidates in order, the entries the worker watches, and what was searched."""

    sources: list[Source] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)  # 'softmax', 'LayerNorm.apply', 'RMSNorm.forward'
    script_lines: list[int] = field(default_factory=list)  # module-level statements that call an entry
    searched: list[str] = field(default_factory=list)
    package: Path | None = None  # the package root of the file (its import root is the parent)
    model: FileModel | None = None  # the file read (probe_plan.py names an entry's arguments from it)

    def usable(self) -> list[Source]:
        """The candidates the worker tries, in order (a sidecar or KernelBench harness is run as a harness)."""
        return [s for s in self.sources if not s.why_not and s.kind != "kernelbench"][:MAX_TRIED]

    def request(self, target: Path, root: Path, rel: Callable[[Path], Any]) -> dict[str, Any]:
        """The worker's `caller` argument: the candidates, the entries to watch, how to import the file."""
        path, module = module_name(target, root)
        return {"sources": [s.request(rel, root, target) for s in self.usable()], "entries": list(self.entries),
                "script_lines": list(self.script_lines), "import_path": str(path), "module": module}

    def none_found(self, rel: Callable[[Path], Any]) -> str:
        """Why there is no example call, in words: what was searched, the candidates that cannot run."""
        names = ", ".join(self.entries[:6]) or "none"
        text = (f"no example call found: searched {'; '.join(self.searched)}; the file's kernel-launching functions: "
                f"{names}")
        bad = [f"{s.spec(rel)}: {s.why_not}" for s in self.sources if s.why_not]
        if bad:
            text += "; found but not usable: " + "; ".join(bad[:4])
        return text


def find(target: Path, root: Path, read: Callable[[Path], str] | None = None) -> Found:
    """The candidate example calls of `target`, in the order of issue 45 (module docstring)."""
    read = read or (lambda p: p.read_text(encoding="utf-8", errors="replace"))
    out = Found()
    try:
        source = read(target)
        tree = ast.parse(source, filename=str(target))
    except (OSError, SyntaxError, ValueError) as e:
        out.searched.append(f"nothing: the file does not parse ({type(e).__name__})")
        return out
    top = package_root(target, root)
    out.package = top if (top / "__init__.py").is_file() else None
    model = FileModel(source, target.name, tree, follow(tree, target, top, lambda p: p.name, read).kernels)
    out.model, out.entries = model, entries(model)
    kb = _kernelbench_beside(target, model, read)
    out.sources += kb
    out.searched.append("a KernelBench problem beside the file" + (" (found)" if kb else ""))
    if not out.entries:
        out.searched.append("no caller: no function of the file launches a kernel")
        return out
    direct = _entry_names(out.entries) | _aliases(tree, _entry_names(out.entries))
    own = Callers(tree, target, direct)
    out.script_lines = own.script_lines
    out.sources += own.sources()
    out.searched.append(f"the file's tests, script code, benchmarks and docstrings ({len(own.sources())} found)")
    more, searched = package_callers(target, root, top, direct, read)
    out.sources += more
    out.searched.append(searched)
    return out



def request_for(target: Path, spec: str, root: Path | None = None) -> dict[str, Any]:
    """The worker's `caller` argument for the one candidate a reproducer's --caller names ('tests/x.py::test_softmax',
    probe_repro.py), found again from the files; UsageError naming the candidates when the search finds no such one."""
    root = (root or Path.cwd()).resolve()
    found = find(target.resolve(), root)
    rel = _rel_to(root)
    req = found.request(target.resolve(), root, rel)
    req["sources"] = [s for s in req["sources"] if s["spec"] == spec]
    if not req["sources"]:
        known = ", ".join(s.spec(rel) for s in found.usable()) or "none"
        raise UsageError(f"no caller {spec!r} of {target} (found: {known})")
    return req


def _rel_to(root: Path) -> Callable[[Path], str]:
    def rel(p: Path) -> str:
        try:
            return str(Path(p).resolve().relative_to(root))
        except ValueError:
            return str(p)

    return rel

def entries(model: FileModel) -> list[str]:
    """The file's kernel-launching callables as the worker wraps them: functions ('softmax'), an autograd Function's
    'Cls.apply', a module's or class's launching methods ('RMSNorm.forward'); never its tests or benchmarks."""
    out = [q for q in model.funcs if "." not in q and not _NOT_PRODUCT.match(q) and model.reaches_launch(q)]
    for cname, cls in model.classes.items():
        if _NOT_PRODUCT.match(cname):
            continue
        bases = [dotted(b) for b in cls.bases]
        if any(b.endswith("Function") for b in bases):
            if f"{cname}.forward" in model.funcs and model.reaches_launch(f"{cname}.forward"):
                out.append(f"{cname}.apply")
            continue
        for q in model.funcs:
            c, _, meth = q.partition(".")
            if c == cname and meth and (not meth.startswith("_") or meth == "__call__") and model.reaches_launch(q):
                out.append(q)
    return out


def _entry_names(ents: list[str]) -> set[str]:
    """The names a caller uses to reach the entries: 'softmax', 'LayerNorm.apply', 'RMSNorm' (built, then called)."""
    return {e if e.endswith(".apply") or "." not in e else e.split(".")[0] for e in ents}


def _aliases(tree: ast.Module, names: set[str]) -> set[str]:
    """Module-level names bound to an entry without calling it: `layer_norm = LayerNorm.apply`."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and not has_call(node.value) and refs(node.value) & names:
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


# ---- beside the file -------------------------------------------------------------------------------------------
def harness_form(path: Path) -> str:
    """'task' (make_inputs), 'kernelbench' (Model, get_inputs, get_init_inputs) or '' (neither: a file named
    reference.py that is a package's own reference code, late-interaction-kernels' `reference.py`)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return ""
    defs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    return "task" if "make_inputs" in defs else "kernelbench" if {"Model", "get_inputs", "get_init_inputs"} <= defs \
        else ""


def _kernelbench_beside(target: Path, model: FileModel, read: Callable[[Path], str]) -> list[Source]:
    """A KernelBench-form problem in the folder, for a file that defines ModelNew (one: several are ambiguous)."""
    if "ModelNew" not in model.classes:
        return []
    found = []
    for f in sorted(target.parent.glob("*.py")):
        if f.resolve() == target.resolve() or f.stat().st_size > MAX_BYTES:
            continue
        try:
            t = ast.parse(read(f))
        except (OSError, SyntaxError, ValueError):
            continue
        defs = {n.name for n in t.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        if {"Model", "get_inputs", "get_init_inputs"} <= defs and "ModelNew" not in defs:
            found.append(f)
    if len(found) != 1:
        return []
    return [Source("kernelbench", found[0], 1, "Model", "Model, get_inputs()")]
