"""The package's callers of an audited file (issue 45, part 3; server side, the AST only): the files of its package
(the folder's, for a file in no package) and of the package's test folders that import one of its entries and call
it, then those that call it through one of the package's wrappers (a function or module of another file that calls
the entry with the inputs it builds).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

from .caller_sources import TEST_DIRS, Callers, Source
from .imports import resolve
from .structure import _NOT_PRODUCT

MAX_FILES = 400  # files of the package and its test folders read for callers (liger-kernel 0.8.5: 310 .py files)
MAX_BYTES = 1_000_000


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


def package_callers(target: Path, root: Path, top: Path, names: set[str], read: Callable[[Path], str]) \
        -> tuple[list[Source], str]:
    """(callers in other files of the package: direct importers of an entry, then importers of a wrapper; what was
    searched, in words). `names`: the entries as the audited file binds them ('softmax', 'LayerNorm.apply', an
    alias 'layer_norm')."""
    files = _package_files(target, root, top)
    if not files:
        return [], "no other file beside it"
    trees: dict[Path, ast.Module] = {}
    for f in files:
        try:
            if f.stat().st_size <= MAX_BYTES:
                trees[f] = ast.parse(read(f), filename=str(f))
        except (OSError, SyntaxError, ValueError):
            continue
    names = {n.split(".")[0] for n in names}  # an importer names the class, then calls .apply
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
    ordered = [s for s in direct if s.kind != "package_wrapper"] + [s for s in direct if s.kind == "package_wrapper"]
    seen = {(d.file, d.name) for d in direct}
    return ordered + [s for s in wrappers if (s.file, s.name) not in seen], \
        f"{len(trees)} other files of the package and its tests"


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
