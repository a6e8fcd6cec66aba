"""Kernels the audited file imports from other modules of its own package, read as if they were local (issue 35).

fairchem-core's fused_wigner.py launches kernels it imports from kernels.py (`from fairchem.core.models.uma.triton.
kernels import wigner_conv1_fused_fwd_kernel`); a static pass of fused_wigner.py alone saw no @triton.jit and missed
their int32 edge offsets (held_out_19). follow() reads those modules: each `from M import name` whose module M is a
file of the same package, and keeps the @triton.jit functions the file imports (with the @jit helpers they call in
their own module). The audit then walks and checks them with their own module's names and constants, and puts every
finding on their own file and line (a line of another file is never put on the audited file).

Bounds: `from ... import` statements only (relative imports, or absolute ones whose module names a file under the
package root: the highest folder above the file that holds an `__init__.py`, or the file's own folder when it is in
no package, never above the workspace), modules whose top-level package is not installed here (an installed
package, torch or triton, is not the user's code), at most MAX_DEPTH re-exports deep, MAX_FILES files of at most
MAX_BYTES each. The source is parsed, never executed.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from .structure import FileModel, KernelDecl

MAX_DEPTH = 3  # the entry's import, then re-exports (a package __init__ that imports from .kernels)
MAX_FILES = 8
MAX_BYTES = 2_000_000  # fairchem's kernels.py is 95 kB; a generated 16k-line module is ~700 kB


@dataclass
class Imported:
    """The kernels read from other files: local name -> decl (its `origin` the other file's model)."""

    kernels: dict[str, KernelDecl] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # the files kernels were taken from, as the report names them
    notes: list[str] = field(default_factory=list)  # what was not followed, and why


def package_root(path: Path, bound: Path) -> Path:
    """The top folder of the file's package (the highest ancestor holding __init__.py, not above `bound`); the
    file's own folder when it is in no package."""
    d = path.parent
    try:
        bound = bound.resolve()
        while (d / "__init__.py").is_file() and (d.parent / "__init__.py").is_file() and \
                d.parent.resolve().is_relative_to(bound):
            d = d.parent
    except OSError:
        return path.parent
    return d


def _file(base: Path, parts: list[str], root: Path) -> Path | None:
    if not parts or any(not p.isidentifier() for p in parts):
        return None
    stem = base.joinpath(*parts)
    for cand in (stem.with_name(stem.name + ".py"), stem / "__init__.py"):
        try:
            if cand.is_file() and cand.resolve().is_relative_to(root.resolve()):
                return cand
        except OSError:
            continue
    return None


def _installed(top: str) -> bool:
    try:
        return importlib.util.find_spec(top) is not None  # locates the package; imports none of its code
    except (ImportError, ValueError):
        return False


def resolve(node: ast.ImportFrom, path: Path, root: Path) -> Path | None:
    """The file of the package that `from M import ...` in `path` names, or None (not the package's, not found)."""
    parts = (node.module or "").split(".") if node.module else []
    if node.level:
        base = path.parent
        for _ in range(node.level - 1):
            base = base.parent
        return _file(base, parts, root)
    if not parts:
        return None
    if parts[0] == root.name and (root / "__init__.py").is_file():
        return _file(root, parts[1:], root)  # the package imports itself by its own name
    if _installed(parts[0]):
        return None
    # a package installed elsewhere under its own name, audited from a copy (the corpus): the longest tail of the
    # dotted path that names a file under the root, looked up from the importing file's folder, then the root
    for base in (path.parent, root):
        for i in range(1, len(parts)):
            found = _file(base, parts[i:], root)
            if found is not None:
                return found
    return None


def follow(tree: ast.Module, path: Path, root: Path, name_of: Callable[[Path], str],
           read: Callable[[Path], str] | None = None) -> Imported:
    """The @triton.jit functions `tree` (the file at `path`) imports from files of its package under `root`."""
    out = Imported()
    models: dict[Path, FileModel] = {}
    read = read or (lambda p: p.read_text(encoding="utf-8", errors="replace"))

    def model_of(f: Path) -> FileModel | None:
        key = f.resolve()
        if key in models:
            return models[key]
        if len(models) >= MAX_FILES:
            out.notes.append(f"imports past {MAX_FILES} files not read ({name_of(f)})")
            return None
        try:
            if f.stat().st_size > MAX_BYTES:
                out.notes.append(f"{name_of(f)} not read: larger than {MAX_BYTES // 1_000_000} MB")
                return None
            src = read(f)
            m = FileModel(src, name_of(f), ast.parse(src, filename=str(f)))
        except (OSError, SyntaxError, ValueError) as e:
            out.notes.append(f"{name_of(f)} not read: {type(e).__name__}: {e}")
            return None
        models[key] = m
        return m

    def visit(t: ast.Module, at: Path, wanted: dict[str, str] | None, depth: int) -> None:
        """`wanted`: the names another file imports from this one (its local name -> ours); None for the entry."""
        for node in ast.walk(t):
            if not isinstance(node, ast.ImportFrom) or node.module == "__future__":
                continue
            names = {a.name: a.asname or a.name for a in node.names if a.name != "*"}
            if wanted is not None:  # a re-export: only what the importer asked for
                names = {n: wanted[local] for n, local in names.items() if local in wanted}
            if not names:
                continue
            f = resolve(node, at, root)
            if f is None:
                continue
            m = model_of(f)
            if m is None:
                continue
            missing = {}
            for theirs, local in names.items():
                decl = m.kernels.get(theirs)
                if decl is None:
                    missing[theirs] = local
                    continue
                _take(out, m, decl, local)
            if missing and depth < MAX_DEPTH:
                visit(m.tree, f, missing, depth + 1)

    visit(tree, path, None, 1)
    return out


def _take(out: Imported, m: FileModel, decl: KernelDecl, local: str) -> None:
    """The kernel under its local name, and the @jit helpers it calls in its own file (under their names)."""
    if m.filename not in out.files:
        out.files.append(m.filename)
    todo = [(decl, local)]
    while todo:
        d, name = todo.pop()
        if name in out.kernels:
            continue
        out.kernels[name] = replace(d, name=name, origin=m) if name != d.name else replace(d, origin=m)
        todo += [(m.kernels[h], h) for h in sorted(m.kernel_calls(d)) if h not in out.kernels]
