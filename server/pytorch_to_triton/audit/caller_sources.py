"""The candidate example calls inside one file (issue 45, part 3; server side, the AST only): its `test_*`
functions, its script code (module-level calls, the `__main__` block), its benchmarks (`perf_report`, `bench*`), its
docstring examples, each that reaches one of the audited file's entries; `Source` says what each is, where, and what
the worker (worker/probe/callers.py) runs.
"""

from __future__ import annotations

import ast
import doctest
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .caller_args import compared, parameters, refs
from .imports import package_root
from .names import dotted, int_literal
from .structure import _NOT_PRODUCT

TEST_DIRS = ("test", "tests")
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


def has_call(node: ast.AST) -> bool:
    """Whether a node calls anything (an alias `f = Cls.apply` does not)."""
    return any(isinstance(n, ast.Call) for n in ast.walk(node))


def _is_main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and \
        "__name__" in refs(node.test) and any(isinstance(c, ast.Constant) and c.value == "__main__"
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
                hit = sorted(refs(node) & set(reach))
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
            if _is_main_guard(node) or (isinstance(node, ast.Assign) and not has_call(node.value)):
                continue
            if refs(node) & set(self.reach):
                yield node

    def _skipped(self) -> list[int]:
        """The module-level statements left out when another caller is run: those that call an entry, and those
        after them that read what they bound (`print(output_triton)` after `output_triton = add(x, y)`)."""
        lines, bound = [], set()
        calls = {id(n) for n in self._script()}
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                continue
            if id(node) in calls or refs(node) & bound:
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
            if _is_main_guard(node) and refs(node) & set(self.reach):
                out.append(self._source("main", node.lineno, MAIN, f"the __main__ block (line {node.lineno})",
                                        self._via(node)))
        out += [self._function(fn, "benchmark") for name, fn in self.funcs.items() if name in self.reach
                and (_perf_report(fn) or _BENCH.match(name))]
        out += self._docstrings()
        return out

    def _via(self, node: ast.AST) -> str:
        return next((self.reach[n] for n in sorted(refs(node) & set(self.reach)) if self.reach[n]), "")

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
            if not refs(parsed) & set(self.reach):
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



def module_name(path: Path, root: Path) -> tuple[Path, str]:
    """(the folder to put on sys.path, the dotted module name) to import `path` as its package does
    ('src', 'liger_kernel.ops.rms_norm'); a file in no package: (its folder, its stem)."""
    top = package_root(path, root)
    if not (top / "__init__.py").is_file():
        return path.parent, path.stem
    rel = path.relative_to(top.parent).with_suffix("")
    parts = list(rel.parts[:-1]) + ([] if rel.name == "__init__" else [rel.name])
    return top.parent, ".".join(parts)
