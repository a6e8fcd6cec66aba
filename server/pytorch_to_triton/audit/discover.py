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
named in the report, not run.
"""

from __future__ import annotations

import ast
import doctest
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .imports import follow, package_root, resolve
from .names import dotted, int_literal
from .structure import _NOT_PRODUCT, FileModel

MAX_FILES = 400  # files of the package and its test folders read for callers (liger-kernel 0.8.5: 310 .py files)
MAX_BYTES = 1_000_000
MAX_TRIED = 8  # candidates the worker tries, in order, before it says none was usable
TEST_DIRS = ("test", "tests")
# (a sidecar's [audit] harness and a task reference come first, probe_plan.py; a KernelBench problem is run as one)
KINDS = ("kernelbench", "test", "main", "benchmark", "docstring", "package_wrapper")
SCRIPT, MAIN = "<module>", "__main__"
_BENCH = re.compile(r"^_?bench")  # bench_softmax, benchmark: run with their call site's or default arguments


@dataclass
class Source:
    """One candidate example call: what it is, where, and what the worker runs."""

    kind: str  # one of KINDS
    file: Path  # the file holding the caller (the harness, for sidecar and kernelbench)
    line: int
    name: str  # a function's name; SCRIPT (module-level calls); MAIN (the __main__ block); 'f.__doc__'
    call: str  # the call as the report names it: 'test_softmax(M=1823, N=781)'
    params: dict[str, str] = field(default_factory=dict)  # argument -> the Python source of the value given
    sizes: list[str] = field(default_factory=list)  # the params that are integer sizes (the sizes probe moves them)
    reference: dict[str, Any] = field(default_factory=dict)  # the torch result a test compares the call with
    code: str = ""  # docstring examples: the statements to run
    via: str = ""  # package_wrapper: 'path::Wrapper', the function of the package between the caller and the entry
    why_not: str = ""  # found, but not usable as it stands

    def spec(self, rel: Callable[[Path], Any]) -> str:
        """The caller as `--caller` names it in a reproducer: 'path::name'."""
        return f"{rel(self.file)}::{self.name}"

    def label(self, rel: Callable[[Path], Any], target: Path) -> str:
        """How the report names it: 'tests in the file: test_softmax(M=1823, N=781)'."""
        own = self.file.resolve() == target.resolve()
        if self.kind == "kernelbench":
            return f"KernelBench problem beside the file: {rel(self.file)}"
        what = {"test": "tests", "main": "script code", "benchmark": "benchmarks",
                "docstring": "docstring examples"}.get(self.kind, "callers")
        where = f"{what} in the file" if own else f"{what} of the package ({rel(self.file)})"
        if self.kind == "package_wrapper":
            where = f"the package's wrapper {self.via}, called from {rel(self.file)}"
        return f"{where}: {self.call}"

    def request(self, rel: Callable[[Path], Any], root: Path, target: Path) -> dict[str, Any]:
        """What the worker needs to run it (worker/probe/callers.py): the caller, and how to import its file."""
        path, module = module_name(self.file, root)
        # a test folder's files import the project as pytest's rootdir does (liger-kernel: pythonpath = ["src", "."])
        tests = [str(a.parent) for a in self.file.parents if a.name in TEST_DIRS and a.parent.is_relative_to(root)]
        return {"kind": self.kind, "file": str(self.file), "line": self.line, "name": self.name, "call": self.call,
                "params": dict(self.params), "sizes": list(self.sizes), "code": self.code, "spec": self.spec(rel),
                "label": self.label(rel, target), "import_path": str(path), "module": module, "paths": tests[:1],
                "reference": dict(self.reference)}


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
    out.sources += _package_callers(target, root, top, out, read)
    return out


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
        if isinstance(node, ast.Assign) and not _has_call(node.value) and _refs(node.value) & names:
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _refs(node: ast.AST) -> set[str]:
    """Every dotted name a node reads ('softmax', 'LayerNorm.apply', 'bench.run'), and each prefix of it."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, (ast.Name, ast.Attribute)):
            d = dotted(n)
            if d and not d.startswith("."):
                parts = d.split(".")
                out |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return out


def _has_call(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and \
        "__name__" in _refs(node.test) and any(isinstance(c, ast.Constant) and c.value == "__main__"
                                               for c in ast.walk(node.test))


def _perf_report(fn: ast.FunctionDef) -> bool:
    return any(dotted(d).endswith("perf_report") for d in fn.decorator_list if isinstance(d, ast.Call))


class Callers:
    """The callers inside one file of names that reach an entry (`direct`: the entries as this file names them)."""

    def __init__(self, tree: ast.Module, path: Path, direct: set[str], via: dict[str, str] | None = None,
                 wrappers: bool = False, shown: str = "") -> None:
        """`via`: a name this file imports from a wrapper module -> 'path::Wrapper'; `wrappers`: the file is a
        module of the package (not the audited file, not a test folder's), so its product functions that reach an
        entry are the package's wrappers."""
        self.tree, self.path, self.direct = tree, path, set(direct)
        self.via, self.wrappers, self.shown = via or {}, wrappers, shown or path.name
        self.funcs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self.reach = self._reach()
        self.script_lines = self._skipped()

    def _reach(self) -> dict[str, str]:
        """name -> the wrapper it goes through ('' for none): the direct names, then every function or class of
        the file that reads one (transitively; a perf_report benchmark B also as 'B.run')."""
        reach = {n: self.via.get(n, "") for n in self.direct}
        changed = True
        while changed:
            changed = False
            for name, node in [*self.funcs.items(), *self.classes.items()]:
                if name in reach:
                    continue
                hit = sorted(_refs(node) & set(reach))
                if hit:
                    reach[name] = reach[hit[0]] or (f"{self.shown}::{name}" if self._wrapper(name) else "")
                    if isinstance(node, ast.FunctionDef) and _perf_report(node):
                        reach[f"{name}.run"] = reach[name]
                    changed = True
        return reach

    def _wrapper(self, name: str) -> bool:
        """A product function or class of a file other than the audited one: the package's wrapper."""
        return self.wrappers and not _NOT_PRODUCT.match(name) and not name.startswith("test")

    def _script(self) -> Iterator[ast.stmt]:
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                continue
            if _is_main_guard(node) or (isinstance(node, ast.Assign) and not _has_call(node.value)):
                continue
            if _refs(node) & set(self.reach):
                yield node

    def _skipped(self) -> list[int]:
        """The module-level statements left out when another caller is run: those that call an entry, and those
        after them that read what they bound (`print(output_triton)` after `output_triton = add(x, y)`)."""
        lines, bound = [], set()
        calls = {id(n) for n in self._script()}
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                continue
            if id(node) in calls or _refs(node) & bound:
                lines.append(node.lineno)
                bound |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        return lines

    def sources(self) -> list[Source]:
        """Tests, script code, the __main__ block, benchmarks, docstrings: each that reaches an entry."""
        out = [self._function(fn, "test") for name, fn in self.funcs.items() if name.startswith("test")
               and name in self.reach]
        script = list(self._script())
        if script:
            first = script[0]
            out.append(self._source("main", first.lineno, SCRIPT, f"line {first.lineno}: {_first_line(first)}",
                                    self._via(first)))
        for node in self.tree.body:
            if _is_main_guard(node) and _refs(node) & set(self.reach):
                out.append(self._source("main", node.lineno, MAIN, f"the __main__ block (line {node.lineno})",
                                        self._via(node)))
        out += [self._function(fn, "benchmark") for name, fn in self.funcs.items() if name in self.reach
                and (_perf_report(fn) or _BENCH.match(name))]
        out += self._docstrings()
        return out

    def _via(self, node: ast.AST) -> str:
        return next((self.reach[n] for n in sorted(_refs(node) & set(self.reach)) if self.reach[n]), "")

    def _source(self, kind: str, line: int, name: str, call: str, via: str, **kw: Any) -> Source:
        return Source("package_wrapper" if via else kind, self.path, line, name, call, via=via, **kw)

    def _function(self, fn: ast.FunctionDef, kind: str) -> Source:
        """A test or benchmark function with the arguments its parametrization, defaults or a call site give."""
        via = self.reach.get(fn.name, "") or self._via(fn)
        if _perf_report(fn):
            return self._source(kind, fn.lineno, fn.name, f"{fn.name} (perf_report: its smallest x_vals)", via)
        params, why = parameters(fn, self.tree)
        sizes = [k for k, v in params.items() if _int_source(v)]
        call = f"{fn.name}({', '.join(f'{k}={v}' for k, v in params.items())})"
        ref = compared(fn, self.direct) if kind == "test" and not via else {}
        return self._source(kind, fn.lineno, fn.name, call, via, params=params, sizes=sizes, why_not=why,
                            reference=ref)

    def _docstrings(self) -> list[Source]:
        out = []
        owners = [("", self.tree)] + [(n.name, n) for n in [*self.funcs.values(), *self.classes.values()]]
        for owner, node in owners:
            doc = ast.get_docstring(node, clean=False)
            if not doc or ">>>" not in doc:
                continue
            try:
                examples = doctest.DocTestParser().get_examples(doc)
            except ValueError:
                continue
            code = "".join(e.source for e in examples)
            try:
                parsed = ast.parse(code)
            except SyntaxError:
                continue
            if not _refs(parsed) & set(self.reach):
                continue
            line = node.body[0].lineno + examples[0].lineno  # the docstring's first line, then the example's offset
            name = f"{owner}.__doc__" if owner else "__doc__"
            out.append(self._source("docstring", line, name, f"{name} (line {line}): {_first_line(parsed.body[-1])}",
                                    self._via(parsed), code=code))
        return out


def _first_line(node: ast.AST) -> str:
    return ast.unparse(node).splitlines()[0][:100]


def _int_source(v: str) -> bool:
    try:
        return int_literal(ast.parse(v, mode="eval").body) is not None
    except SyntaxError:
        return False


# ---- the reference a test compares with ------------------------------------------------------------------------
COMPARE = ("assert_close", "allclose", "assert_allclose", "assert_verbose_allclose", "assert_almost_equal")


def compared(fn: ast.FunctionDef, entries: set[str]) -> dict[str, Any]:
    """The torch result a test compares its call of an entry with, as an expression of that call's arguments:
    `y_tri = layer_norm(x, w_shape, weight, bias, eps)` ... `y_ref = F.layer_norm(x, w_shape, weight, bias, eps)`
    ... `assert torch.allclose(y_tri, y_ref, atol=1e-2, rtol=0)` gives {expr, args, keywords, rtol, atol}; {} when the
    test has no such pair (its reference reads other locals: then the probes judge without one)."""
    body = sorted((n for n in ast.walk(fn) if isinstance(n, (ast.Assign, ast.Call))), key=lambda n: (n.lineno,
                                                                                                  n.col_offset))
    assigns = [(n.targets[0].id, n.value, n.lineno) for n in body if isinstance(n, ast.Assign)
               and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)]
    local = {name for name, _, _ in assigns} | {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)
                                                and isinstance(n.ctx, ast.Store)}
    call = next(((name, v) for name, v, _ in assigns if isinstance(v, ast.Call) and dotted(v.func) in entries
                 and all(isinstance(a, (ast.Name, ast.Constant)) for a in [*v.args, *(k.value for k in v.keywords)])
                 and all(k.arg for k in v.keywords)), None)
    if call is None:
        return {}
    out, node = call
    args = [a.id if isinstance(a, ast.Name) else None for a in node.args]
    keywords = {k.arg: k.value.id for k in node.keywords if isinstance(k.value, ast.Name)}
    given = {a for a in args if a} | set(keywords.values())
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    for cmp in (n for n in body if isinstance(n, ast.Call) and dotted(n.func).rsplit(".", 1)[-1] in COMPARE):
        if len(cmp.args) < 2 or not any(isinstance(a, ast.Name) and a.id == out for a in cmp.args[:2]):
            continue
        other = next(a for a in cmp.args[:2] if not (isinstance(a, ast.Name) and a.id == out))
        if isinstance(other, ast.Name):
            other = next((v for name, v, line in reversed(assigns) if name == other.id and line <= cmp.lineno),
                         None)
        if other is None:
            continue
        reads = {n.id for n in ast.walk(other) if isinstance(n, ast.Name)}
        if out in reads or not reads & given or reads & local - given - params or _refs(other) & entries:
            continue
        tol = {k.arg: v for k in cmp.keywords if k.arg in ("rtol", "atol") and (v := _number(k.value)) is not None}
        return {"expr": ast.unparse(other), "args": args, "keywords": keywords, "line": cmp.lineno, **tol}
    return {}


def _number(node: ast.expr) -> float | None:
    try:
        v = ast.literal_eval(node)
    except ValueError:
        return None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


# ---- the arguments of a test or benchmark function --------------------------------------------------------------
def parameters(fn: ast.FunctionDef, tree: ast.Module) -> tuple[dict[str, str], str]:
    """(argument -> source of its value, why not usable): each pytest parametrization's smallest option, else the
    first call of the function in the file; arguments with defaults keep them."""
    params: dict[str, str] = {}
    for deco in fn.decorator_list:
        if isinstance(deco, ast.Call) and dotted(deco.func).endswith("parametrize") and len(deco.args) >= 2:
            params.update(_parametrize(deco, tree))
    args = fn.args.posonlyargs + fn.args.args
    required = [a.arg for a in args[:len(args) - len(fn.args.defaults)]]
    required += [a.arg for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is None]
    missing = [a for a in required if a not in params and a not in ("self", "cls")]
    if missing:
        site = _call_site(fn.name, tree, [a.arg for a in args])
        params.update({k: v for k, v in site.items() if k not in params})
        missing = [a for a in missing if a not in params]
    if missing:
        return params, (f"its argument{'s' if len(missing) > 1 else ''} {', '.join(missing)} come from no "
                        "parametrize, default or call in the file (pytest fixtures are not run)")
    return params, ""


def _parametrize(deco: ast.Call, tree: ast.Module) -> dict[str, str]:
    names_node, values = deco.args[0], deco.args[1]
    if isinstance(names_node, ast.Constant) and isinstance(names_node.value, str):
        names = [n.strip() for n in names_node.value.split(",") if n.strip()]
    elif isinstance(names_node, (ast.List, ast.Tuple)):
        names = [e.value for e in names_node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    else:
        return {}
    if isinstance(values, ast.Name):  # a module-level list of cases
        values = next((n.value for n in tree.body if isinstance(n, ast.Assign) and
                       any(isinstance(t, ast.Name) and t.id == values.id for t in n.targets)), values)
    if not isinstance(values, (ast.List, ast.Tuple)) or not values.elts:
        src = ast.unparse(values)  # built at run time: the first option, which the worker evaluates
        one = f"list({src})[0]"
        return {names[0]: one} if len(names) == 1 else {n: f"{one}[{i}]" for i, n in enumerate(names)}
    options = [(_unwrap_param(e), _skipped(e)) for e in values.elts]
    best, _ = min(enumerate(options), key=lambda io: (io[1][1], _size(io[1][0]), "float32" not in
                                                        ast.unparse(io[1][0]), io[0]))[1]
    if len(names) == 1:
        return {names[0]: ast.unparse(best)}
    if isinstance(best, (ast.Tuple, ast.List)) and len(best.elts) == len(names):
        return {n: ast.unparse(e) for n, e in zip(names, best.elts)}
    return {n: f"({ast.unparse(best)})[{i}]" for i, n in enumerate(names)}


def _unwrap_param(e: ast.expr) -> ast.expr:
    """pytest.param(a, b, marks=...) -> (a, b)."""
    if isinstance(e, ast.Call) and dotted(e.func).endswith("param"):
        return e.args[0] if len(e.args) == 1 else ast.Tuple(elts=list(e.args), ctx=ast.Load())
    return e


def _skipped(e: ast.expr) -> bool:
    """An option marked skip, skipif or xfail: the last choice."""
    return isinstance(e, ast.Call) and any(m in ast.unparse(k.value) for k in e.keywords if k.arg == "marks"
                                           for m in ("skip", "xfail"))


def _size(e: ast.expr) -> int:
    """The product of the positive integer literals of an option: its size, to pick the smallest."""
    p = 1
    for n in ast.walk(e):
        v = int_literal(n)
        if v is not None and v > 0:
            p *= v
    return p


def _call_site(name: str, tree: ast.Module, params: list[str]) -> dict[str, str]:
    """The arguments of the first call of `name` in the file (the tutorials' `test_layer_norm(1151, 8192, ...)`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and dotted(node.func) == name and \
                not any(isinstance(a, ast.Starred) for a in node.args):
            got = {p: ast.unparse(a) for p, a in zip(params, node.args)}
            got.update({k.arg: ast.unparse(k.value) for k in node.keywords if k.arg})
            return got
    return {}


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


# ---- the package -----------------------------------------------------------------------------------------------
def module_name(path: Path, root: Path) -> tuple[Path, str]:
    """(the folder to put on sys.path, the dotted module name) to import `path` as its package does
    ('src', 'liger_kernel.ops.rms_norm'); a file in no package: (its folder, its stem)."""
    top = package_root(path, root)
    if not (top / "__init__.py").is_file():
        return path.parent, path.stem
    rel = path.relative_to(top.parent).with_suffix("")
    parts = list(rel.parts[:-1]) + ([] if rel.name == "__init__" else [rel.name])
    return top.parent, ".".join(parts)


def _package_files(target: Path, root: Path, top: Path) -> list[Path]:
    """The package's files (the folder's, for a file in no package), then its test folders' (beside the package
    or its src/ folder), within the workspace."""
    package = (top / "__init__.py").is_file()
    dirs = [(top, package)] + [(d / t, True) for d in ((top.parent, top.parent.parent) if package else (top,))
                               for t in TEST_DIRS]
    out: list[Path] = []
    for d, deep in dirs:
        try:
            if not d.is_dir() or not d.resolve().is_relative_to(root.resolve()):
                continue
        except OSError:
            continue
        for f in sorted(d.rglob("*.py") if deep else d.glob("*.py")):
            if len(out) >= MAX_FILES:
                return out
            if f.resolve() != target.resolve() and f not in out:
                out.append(f)
    return out


def _resolve(node: ast.ImportFrom, path: Path, top: Path) -> Path | None:
    """The file `from M import ...` names: the package's (imports.resolve), or a plain module beside the importing
    file or at the top of the package's tree (`from kernel import softmax`, run with that folder on sys.path)."""
    f = resolve(node, path, top)
    if f is not None or node.level or not node.module:
        return f
    parts = node.module.split(".")
    for base in (path.parent, top, top.parent):
        cand = base.joinpath(*parts[:-1], parts[-1] + ".py")
        if cand.is_file():
            return cand
    return None


def _package_callers(target: Path, root: Path, top: Path, found: Found,
                     read: Callable[[Path], str]) -> list[Source]:
    """Callers in other files of the package: direct importers of an entry, then importers of a wrapper."""
    files = _package_files(target, root, top)
    if not files:
        found.searched.append("no other file beside it")
        return []
    trees: dict[Path, ast.Module] = {}
    for f in files:
        try:
            if f.stat().st_size <= MAX_BYTES:
                trees[f] = ast.parse(read(f), filename=str(f))
        except (OSError, SyntaxError, ValueError):
            continue
    names = {e.split(".")[0] for e in found.entries}
    names |= _aliases(ast.parse(read(target)), _entry_names(found.entries))
    exported: dict[Path, dict[str, str]] = {target.resolve(): dict.fromkeys(names, "")}  # file -> names that reach
    direct: list[Source] = []
    for f, t in trees.items():  # files importing an entry: their callers, and their product functions (wrappers)
        got = _imported(t, f, top, exported)
        if not got:
            continue
        c = Callers(t, f, set(got), via=got, wrappers=f.resolve().is_relative_to(top.resolve()) and
                    (top / "__init__.py").is_file(), shown=_rel(f, top))
        direct += c.sources()
        exported[f.resolve()] = {n: w or f"{_rel(f, top)}::{n}" for n, w in c.reach.items() if "." not in n
                                 and not _NOT_PRODUCT.match(n) and not n.startswith("test") and n not in got}
    wrappers: list[Source] = []
    for f, t in trees.items():  # files importing a wrapper
        got = _imported(t, f, top, {k: v for k, v in exported.items() if k != target.resolve()})
        if got:
            wrappers += [s for s in Callers(t, f, set(got), via=got).sources() if s.kind == "package_wrapper"]
    found.searched.append(f"{len(trees)} other files of the package and its tests")
    ordered = [s for s in direct if s.kind != "package_wrapper"] + [s for s in direct if s.kind == "package_wrapper"]
    return ordered + [s for s in wrappers if (s.file, s.name) not in {(d.file, d.name) for d in direct}]


def _rel(f: Path, top: Path) -> str:
    try:
        return str(f.relative_to(top.parent))
    except ValueError:
        return f.name


def _imported(tree: ast.Module, path: Path, top: Path, exported: dict[Path, dict[str, str]]) -> dict[str, str]:
    """Local name -> its wrapper ('' for an entry) of every name this file imports from a file in `exported`
    (`from pkg.ops.softmax import softmax`, one re-export through a package __init__, or the module itself:
    `from pkg.ops import softmax as sm` then `sm.softmax(...)`)."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
            continue
        f = _resolve(node, path, top)
        if f is None:
            continue
        for a in node.names:
            local = a.asname or a.name
            sub = f.parent / f"{a.name}.py"  # `from pkg.ops import softmax`: the module itself
            if f.name == "__init__.py" and sub.resolve() in exported:
                out.update({f"{local}.{n}": w for n, w in exported[sub.resolve()].items()})
                continue
            names = exported.get(f.resolve()) or _reexported(f, a.name, top, exported)
            if a.name in names:
                out[local] = names[a.name]
    return out


def _reexported(init: Path, name: str, top: Path, exported: dict[Path, dict[str, str]]) -> dict[str, str]:
    """The name as a package __init__ re-exports it from a file in `exported` (`from .softmax import softmax`)."""
    if init.name != "__init__.py":
        return {}
    try:
        tree = ast.parse(init.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return {}
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        theirs = next((a.name for a in node.names if (a.asname or a.name) == name), None)
        f = _resolve(node, init, top) if theirs else None
        if f is not None and theirs in exported.get(f.resolve(), {}):
            return {name: exported[f.resolve()][theirs]}
    return {}
