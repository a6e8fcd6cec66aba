"""Load reference and candidate files (references/task-format.md) and build seeded cases."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import inspect
import linecache
import math
import os
import sys
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from . import kernel_reuse
from .code_cache import CachedSourceLoader

DTYPES = {
    "float32": torch.float32, "fp32": torch.float32, "float": torch.float32,
    "float16": torch.float16, "fp16": torch.float16, "half": torch.float16,
    "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
    "float64": torch.float64, "fp64": torch.float64, "double": torch.float64,
    "int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "bool": torch.bool,
}

class TaskError(Exception):
    """A task file cannot be used as written; `phase` says where it went wrong."""

    def __init__(self, phase: str, message: str, usage: bool = False):
        super().__init__(message)
        self.phase = phase
        self.usage = usage


SIZES_NEED_KERNELBENCH = ("sizes override a KernelBench reference's module-level constants (batch_size, dim, ...); "
                          "this reference is in function form: give cases with a shape instead, e.g. "
                          "[{'name': 'big', 'shape': [4096, 4096]}]")


def dtype_from_name(name: str | torch.dtype) -> torch.dtype:
    """torch dtype for a name like 'bf16' or 'float32'."""
    if isinstance(name, torch.dtype):
        return name
    key = str(name).lower().removeprefix("torch.")
    if key not in DTYPES:
        raise TaskError("inputs", f"unknown dtype {name!r}; use one of {sorted(set(DTYPES))}", usage=True)
    return DTYPES[key]


def dtype_name(dtype: torch.dtype) -> str:
    """'float32' for torch.float32."""
    return str(dtype).removeprefix("torch.")


@dataclass
class Case:
    """One validation case handed to make_inputs (see references/task-format.md)."""

    name: str
    shape: Any
    dtype: torch.dtype
    device: str
    seed: int
    scale: float = 1.0
    _gen: torch.Generator = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._gen = torch.Generator(device="cpu").manual_seed(self.seed)

    def _place(self, t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        return t.to(device=self.device, dtype=dtype)

    def _big(self, shape: tuple[int, ...]) -> bool:
        # CPU generation keeps values identical on CPU and GPU; above 64 Mi elements it is too slow.
        return self.device != "cpu" and self.device != "meta" and math.prod(shape) > (1 << 26)

    def randn(self, *shape: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
        """Normal values times `scale` (integers in [-64, 64) for integer dtypes)."""
        shape = _shape(shape)
        dt = dtype or self.dtype
        if self.device == "meta":
            return torch.empty(shape, dtype=dt, device="meta")
        if not (dt.is_floating_point or dt.is_complex):
            return self.randint(-64, 64, shape, dtype=dt) if dt != torch.bool else self.randint(0, 2, shape, dtype=dt)
        if self._big(shape):
            g = torch.Generator(device=self.device).manual_seed(self.seed)
            return (torch.randn(shape, generator=g, device=self.device) * self.scale).to(dt)
        return self._place(torch.randn(shape, generator=self._gen) * self.scale, dt)

    def rand(self, *shape: Any, low: float = 0.0, high: float = 1.0, dtype: torch.dtype | None = None) -> torch.Tensor:
        """Uniform values in [low, high) times `scale`."""
        shape = _shape(shape)
        dt = dtype or self.dtype
        if self.device == "meta":
            return torch.empty(shape, dtype=dt, device="meta")
        if not dt.is_floating_point:
            return self.randint(int(low), max(int(high), int(low) + 1), shape, dtype=dt)
        if self._big(shape):
            g = torch.Generator(device=self.device).manual_seed(self.seed)
            t = torch.rand(shape, generator=g, device=self.device)
        else:
            t = torch.rand(shape, generator=self._gen)
        return self._place((low + (high - low) * t) * self.scale, dt)

    def randint(self, low: int, high: int, shape: Any, dtype: torch.dtype = torch.int64) -> torch.Tensor:
        """Integers in [low, high)."""
        shape = _shape((shape,) if isinstance(shape, int) else tuple(shape))
        if self.device == "meta":
            return torch.empty(shape, dtype=dtype, device="meta")
        return torch.randint(low, high, shape, generator=self._gen).to(device=self.device, dtype=dtype)


def _shape(shape: Any) -> tuple[int, ...]:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


@functools.cache
def _module_dir(file: str) -> str:
    # Resolving every loaded module's path (1200-4000 of them) cost 55-180 ms per load_module on the dev CPU, twice
    # per validation; a module's file does not move while the worker lives, so each is resolved once.
    return str(Path(file).resolve().parent)


# module name -> (weak reference to the module seen under it, its folder or None): the scan below then looks at
# each of the 1200-4000 loaded modules' __file__ once, not on every load (0.8 ms per load on the dev CPU).
_DIR_OF: dict[str, tuple[weakref.ref, str | None]] = {}


def _forget_user_modules(directory: Path) -> None:
    # A user's helper module (e.g. `import common`) must be re-read after edits, not served stale.
    where = str(directory)
    for name, mod in list(sys.modules.items()):
        seen = _DIR_OF.get(name)
        if seen is None or seen[0]() is not mod:
            f = getattr(mod, "__file__", None)
            folder = _module_dir(f) if isinstance(f, str) and not name.startswith("pytorch_to_triton") else None
            try:
                _DIR_OF[name] = seen = (weakref.ref(mod), folder)
            except TypeError:  # not weak-referenceable (a stand-in object in sys.modules): no memo
                seen = (lambda: None, folder)  # type: ignore[assignment]
        if seen[1] == where:
            del sys.modules[name]


# The folders load_module put on sys.path (user folders): their modules may be forgotten, never anyone else's.
_USER_DIRS: set[str] = set()


def _forget_shadowed(directory: Path) -> None:
    """Modules another user folder gave under a name this folder also provides (`reference`, `common`): a bare
    `from reference import reference` in this folder's file must get this folder's, not one an earlier call in this
    worker imported from its own folder. (The validation corpus's calls_reference cheat got another task's
    reference.py in CI on 2026-12-07: that task's folder stood ahead of its own on sys.path; the folder now moves to
    the front, and this forgets what an earlier import left under the same name.)"""
    try:
        names = {p.stem for p in directory.glob("*.py")} | {p.name for p in directory.iterdir()
                                                             if (p / "__init__.py").is_file()}
    except OSError:
        return
    where = str(directory)
    for name, mod in list(sys.modules.items()):
        if name.split(".")[0] not in names:
            continue
        f = getattr(mod, "__file__", None)
        folder = _module_dir(f) if isinstance(f, str) else None
        if folder is not None and folder != where and (folder in _USER_DIRS or
                                                       any(folder.startswith(d + os.sep) for d in _USER_DIRS)):
            del sys.modules[name]


def load_module(path: Path, role: str) -> ModuleType:
    """Import a user file under a fresh module name (phase 'import' on any failure). Its folder comes first on
    sys.path, so its bare imports find its own neighbours."""
    path = Path(path).resolve()
    linecache.checkcache()  # Triton reads kernel source through inspect/linecache
    directory = path.parent
    _forget_user_modules(directory)
    _forget_shadowed(directory)
    if not sys.path or sys.path[0] != str(directory):
        if str(directory) in sys.path:
            sys.path.remove(str(directory))
        sys.path.insert(0, str(directory))
    _USER_DIRS.add(str(directory))
    stamp = hashlib.sha1(f"{path}:{path.stat().st_mtime_ns}".encode()).hexdigest()[:10]
    name = f"p2t_{role}_{path.stem}_{stamp}"
    spec = importlib.util.spec_from_file_location(name, path, loader=CachedSourceLoader(name, str(path)))
    if spec is None or spec.loader is None:
        raise TaskError("import", f"cannot import {path}", usage=True)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    kernel_reuse.adopt(mod, path)  # an unchanged file keeps its compiled kernels and autotune choices
    return mod


def _is_jit(obj: Any) -> bool:
    return type(obj).__module__.startswith("triton") or hasattr(obj, "fn") and type(obj).__name__ in (
        "JITFunction", "Autotuner", "Heuristics", "InterpretedFunction")


def _public_functions(mod: ModuleType, exclude: set[str]) -> list[str]:
    out = []
    for name, obj in vars(mod).items():
        if name.startswith("_") or name in exclude or _is_jit(obj):
            continue
        if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
            out.append(name)
    return out


def is_kernelbench(mod: ModuleType) -> bool:
    """True when a reference is in KernelBench's form (Model, get_inputs, get_init_inputs)."""
    return all(hasattr(mod, n) for n in ("Model", "get_inputs")) and inspect.isclass(mod.Model)


def resolve_reference_entry(mod: ModuleType, entry: str | None) -> str:
    """The reference entry's name, following the rules of references/task-format.md."""
    if entry:
        if not callable(getattr(mod, entry, None)):
            raise TaskError("import", f"reference has no function {entry!r}; it defines {_public_functions(mod, set())}",
                            usage=True)
        return entry
    if callable(getattr(mod, "reference", None)):
        return "reference"
    funcs = _public_functions(mod, {"make_inputs", "FLOPS", "BYTES"})
    if len(funcs) == 1:
        return funcs[0]
    raise TaskError("import", f"cannot tell which function is the reference among {funcs}; name it `reference` "
                    "or pass reference_entry", usage=True)


def resolve_candidate_entry(mod: ModuleType, entry: str | None, ref_entry: str) -> str:
    """The candidate entry's name, following the rules of references/task-format.md."""
    if entry:
        if not callable(getattr(mod, entry, None)):
            raise TaskError("import", f"candidate has no function {entry!r}; it defines {_public_functions(mod, set())}",
                            usage=True)
        return entry
    for name in (ref_entry, "candidate"):
        obj = getattr(mod, name, None)
        if callable(obj) and not _is_jit(obj):
            return name
    funcs = _public_functions(mod, set())
    if len(funcs) == 1:
        return funcs[0]
    raise TaskError("import", f"cannot tell which function is the candidate among {funcs}; name it {ref_entry!r} "
                    "or `candidate`, or pass candidate_entry", usage=True)


def check_signatures(ref: Callable, cand: Callable) -> None:
    """Refuse a candidate that cannot accept the reference's positional arguments."""
    try:
        rs, cs = inspect.signature(ref), inspect.signature(cand)
    except (TypeError, ValueError):
        return
    def positional(sig: inspect.Signature) -> tuple[int, float]:
        req, total = 0, 0.0
        for p in sig.parameters.values():
            if p.kind == p.VAR_POSITIONAL:
                return req, math.inf
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                total += 1
                req += p.default is p.empty
        return req, total
    r_req, r_tot = positional(rs)
    c_req, c_tot = positional(cs)
    if c_req > r_tot or (r_req > c_tot):
        raise TaskError("import", f"signatures differ: reference{rs} vs candidate{cs}; the candidate must take the "
                        "same positional arguments as the reference", usage=True)


@dataclass
class Task:
    """A loaded reference (and its metadata) plus one candidate."""

    ref_mod: ModuleType
    ref_fn: Callable
    cand_fn: Callable | None
    cand_mod: ModuleType | None
    kernelbench: bool
    ref_path: Path
    cand_path: Path | None
    ref_model: Any = None
    kb: Any = None  # kernelbench.KernelBenchState: sizes in effect and the models built for them

    def prepare(self, case: Case) -> None:
        """KernelBench: the case's sizes in effect and both models built for them; nothing for form (a)."""
        if self.kb is not None and isinstance(case.shape, dict):
            self.kb.prepare(self, dict(case.shape), case.dtype)

    def make_inputs(self, case: Case) -> list[Any]:
        """Inputs for one case as a list (KernelBench: get_inputs at the case's sizes under its seed)."""
        if self.kernelbench:
            return self.kb.make_inputs(self, case)
        out = self.ref_mod.make_inputs(case)
        if isinstance(out, dict):
            raise TaskError("inputs", "make_inputs must return a tuple of positional arguments, not a dict", usage=True)
        return list(out) if isinstance(out, (tuple, list)) else [out]


class ImportFailure(Exception):
    """The user's file raised while being imported (syntax error, missing module, ...)."""

    def __init__(self, which: str, exc: BaseException):
        super().__init__(f"{which}: {type(exc).__name__}: {exc}")
        self.which = which
        self.exc = exc


def upcast(value: Any) -> Any:
    """Floating tensors to float64 (recursively), for the high-precision reference."""
    if isinstance(value, torch.Tensor):
        if value.is_floating_point() and value.dtype != torch.float64:
            return value.detach().to(torch.float64).requires_grad_(value.requires_grad)
        return value.detach().clone().requires_grad_(value.requires_grad) if value.is_floating_point() else value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(upcast(v) for v in value)
    return value


def clone_inputs(value: Any) -> Any:
    """Deep copies of tensors, preserving strides (non-contiguous inputs stay non-contiguous)."""
    if isinstance(value, torch.Tensor):
        if 0 in value.stride() or not _is_slice(value):
            return value.detach().clone().requires_grad_(value.requires_grad)
        out = torch.empty_strided(value.size(), value.stride(), dtype=value.dtype, device=value.device)
        if value.numel():
            # Copy the whole span, gaps included: the gaps of a strided variant hold poison, and a kernel
            # that ignores strides must read that poison, not uninitialized memory that differs per clone.
            span = 1 + sum((sz - 1) * st for sz, st in zip(value.size(), value.stride(), strict=True))
            out.as_strided((span,), (1,)).copy_(value.detach().as_strided((span,), (1,)))
        return out.requires_grad_(value.requires_grad)
    if isinstance(value, (list, tuple)):
        return type(value)(clone_inputs(v) for v in value)
    return value


def _is_slice(t: torch.Tensor) -> bool:
    # A strided slice (gaps, no overlap): strides sorted descending, each covering the next dimension.
    dims = sorted(((st, sz) for st, sz in zip(t.stride(), t.size()) if sz > 1), reverse=True)
    return all(dims[i][0] >= dims[i + 1][0] * dims[i + 1][1] for i in range(len(dims) - 1))
