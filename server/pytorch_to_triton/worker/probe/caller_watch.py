"""The audited file loaded with its kernel-launching functions watched (issue 45, part 3; callers.py runs the caller):
each watcher, while armed, keeps the first call (the arguments bound by the entry's signature, tensors copied before
it runs) and stops the caller with an exception it cannot catch; disarmed, it is transparent. A file in a package is
imported as its package does; a plain file runs statement by statement, each entry watched as soon as it is bound.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import importlib.util
import inspect
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ..validation.nest import tensors_in
from . import probe_inputs as pi
from .caller_env import CallerStopped, TooLarge


class Recorded(CallerStopped):
    """The entry's first call was recorded: the caller stops here."""


class Unusable(Exception):
    """A candidate that gave no example call, with the reason the report says."""


class Watch:
    """The entries of one loaded module, replaced by recorders that, while armed, keep the first call and stop."""

    def __init__(self, mod: Any, names: list[str], cap: int | None) -> None:
        self.mod, self.names, self.armed = mod, names, False
        self.cap = cap  # elements per tensor of the example under the interpreter (None on a GPU)
        self.call: tuple[str, Callable[..., Any], tuple[Any, ...], dict[str, Any]] | None = None
        self.installed: set[str] = set()
        self.undo: list[Callable[[], None]] = []

    def install(self) -> None:
        """Watch every entry the module binds now (called after each statement of a stepwise load)."""
        for name in self.names:
            if name in self.installed:
                continue
            owner_name, _, attr = name.partition(".")
            owner = self.mod.__dict__.get(owner_name)
            if owner is None:
                continue
            self.installed.add(name)
            if not attr:
                self._function(name, owner)
            elif attr == "apply" and isinstance(owner, type):
                self._apply(name, owner)
            elif isinstance(owner, type) and inspect.isfunction(owner.__dict__.get(attr)):
                self._method(name, owner, attr)

    def _hit(self, name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if not self.armed or self.call is not None:
            return
        big = max((t.numel() for t in tensors_in([*args, *kwargs.values()])), default=0)
        if self.cap is not None and big > self.cap:
            raise TooLarge(f"its call of {name} passes a tensor of {big:,} elements, more than the interpreter's cap "
                           f"of {self.cap:,} for an example (each probe runs it again): give harness= at a smaller "
                           "size, or run on a GPU", big)
        self.call = (name, fn, *_copied(fn, args, kwargs))
        raise Recorded(name)

    def _function(self, name: str, fn: Callable[..., Any]) -> None:
        @functools.wraps(fn)
        def watcher(*args: Any, **kwargs: Any) -> Any:
            self._hit(name, fn, args, kwargs)
            return fn(*args, **kwargs)

        for mod in [self.mod, *_reexporting(self.mod, fn)]:  # `from .ops import softmax` in the package's __init__
            for key, value in list(vars(mod).items()):
                if value is fn:
                    setattr(mod, key, watcher)
                    self.undo.append(functools.partial(setattr, mod, key, fn))

    def _apply(self, name: str, cls: type) -> None:
        bound = cls.apply  # an autograd Function's classmethod, bound to the class
        had = "apply" in cls.__dict__

        def watcher(*args: Any, **kwargs: Any) -> Any:
            self._hit(name, bound, args, kwargs)
            return bound(*args, **kwargs)

        old = cls.__dict__.get("apply")
        cls.apply = staticmethod(watcher)  # type: ignore[attr-defined]
        self.undo.append(lambda: setattr(cls, "apply", old) if had else delattr(cls, "apply"))

    def _method(self, name: str, cls: type, attr: str) -> None:
        func = cls.__dict__[attr]

        @functools.wraps(func)
        def watcher(obj: Any, *args: Any, **kwargs: Any) -> Any:
            self._hit(name, func.__get__(obj, cls), args, kwargs)
            return func(obj, *args, **kwargs)

        setattr(cls, attr, watcher)
        self.undo.append(functools.partial(setattr, cls, attr, func))

    def remove(self) -> None:
        """Put the entries back (aliases bound during a stepwise load keep a disarmed, transparent recorder)."""
        for undo in reversed(self.undo):
            with contextlib.suppress(Exception):
                undo()
        self.undo.clear()


def _reexporting(mod: Any, fn: Any) -> list[Any]:
    """Other loaded modules of the same package that hold `fn` itself (a re-export bound at their import)."""
    top = (getattr(mod, "__name__", "") or "").split(".")[0]
    return [m for name, m in list(sys.modules.items()) if m is not mod and name.split(".")[0] == top
            and isinstance(m, types.ModuleType) and any(v is fn for v in list(vars(m).values()))]


def _copied(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) \
        -> tuple[tuple[Any, ...], dict[str, Any]]:
    """(positional arguments, keyword-only arguments) of the call, every tensor copied (its layout and aliasing
    kept): the entry's own in-place writes, and the caller's after it, never reach the example."""
    try:
        ba = inspect.signature(fn).bind(*args, **kwargs)
        if ba.kwargs and any(p.kind is p.POSITIONAL_OR_KEYWORD for p in ba.signature.parameters.values()
                             if p.name in ba.kwargs):
            ba.apply_defaults()  # a later argument passed by keyword: the earlier defaults become positional
        args, kwargs = ba.args, ba.kwargs
    except (TypeError, ValueError):
        pass
    with torch.no_grad():
        flat = pi.fresh_copies([*args, *kwargs.values()])
    return tuple(flat[:len(args)]), dict(zip(kwargs, flat[len(args):]))


# ---- loading --------------------------------------------------------------------------------------------------
def _forget(root: Path, names: set[str]) -> None:
    """Modules an earlier call (a warm worker) loaded from under `root` whose top-level name is one of `names` (the
    file's package, its caller's): imported afresh, so an edited file is read again. Nothing else (an installed
    package under the workspace, this tool) is touched."""
    where = str(root.resolve())
    for name, mod in list(sys.modules.items()):
        f = getattr(mod, "__file__", None)
        if name.split(".")[0] in names and isinstance(f, str) and f.startswith(where):
            del sys.modules[name]


def _on_path(p: str) -> None:
    if p not in sys.path:
        sys.path.insert(0, p)


def load_target(target: Path, req: dict[str, Any], script: bool, cap: int | None) -> tuple[Any, Watch]:
    """The audited module with its entries watched. A file in a package is imported as the package does (its
    relative imports resolve; its script code runs at import, unwatched); a plain file runs statement by statement,
    each entry watched as soon as it is bound: with `script`, its module-level calls of the entries are the caller
    (the first one is recorded); without, those statements (`script_lines`) are left out."""
    _forget(Path(req["import_path"]), {req["module"].split(".")[0]})
    _on_path(req["import_path"])
    if "." in req["module"] or (target.parent / "__init__.py").is_file():
        mod = importlib.import_module(req["module"])
        watch = Watch(mod, req["entries"], cap)
        watch.install()
        return mod, watch
    name = f"p2t_caller_{target.stem}_{time.monotonic_ns()}"
    mod = types.ModuleType(name)
    mod.__file__ = str(target)
    sys.modules[name] = mod
    if req["module"] not in sys.modules:  # a test beside it imports it by its own name (`from kernel import add`);
        sys.modules[req["module"]] = mod  # never in place of a module already loaded (a stdlib `copy`, `random`)
    skip = set() if script else set(req.get("script_lines") or [])
    watch = Watch(mod, req["entries"], cap)
    source = target.read_text(encoding="utf-8", errors="replace")
    tree = ast.parse(source, filename=str(target))
    future = any(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in tree.body)
    flags = __import__("__future__").annotations.compiler_flag if future else 0
    watch.armed = script
    try:
        for stmt in tree.body:
            if stmt.lineno in skip:
                continue
            exec(compile(ast.Module([stmt], []), str(target), "exec", flags=flags, dont_inherit=True), mod.__dict__)
            watch.install()
    except Recorded:  # the script code's first call of an entry: the module as far as it got is enough
        pass
    finally:
        watch.armed = False
    return mod, watch


def caller_module(target: Path, mod: Any, src: dict[str, Any]) -> Any:
    """The module holding the caller: the audited one, or another file of the package imported as it is."""
    if Path(src["file"]).resolve() == target.resolve():
        return mod
    for p in [*src.get("paths", []), src["import_path"]]:
        _on_path(p)
    _forget(Path(src["import_path"]), {src["module"].split(".")[0]})
    if "." in src["module"] or (Path(src["file"]).parent / "__init__.py").is_file():
        return importlib.import_module(src["module"])
    spec = importlib.util.spec_from_file_location(f"p2t_callerfile_{time.monotonic_ns()}", src["file"])
    if spec is None or spec.loader is None:
        raise Unusable(f"cannot import {src['file']}")
    other = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = other
    spec.loader.exec_module(other)
    return other
