"""Triton's specialisation of one launch, computed the way Triton's JIT computes it, under the interpreter too.

A GPU compiles one binary per (argument types, 16-divisibility / ==1 of the ints and pointers, constexpr values,
num_warps/num_stages/...). The interpreter compiles nothing, so the launch recorder (runtime.py) asks this module
for the key Triton would have compiled on: Triton's own binder (`create_function_from_signature`, present from 3.6
to 3.9) run on the launch's real arguments, with the NVIDIA backend's rules (no GPU needed to build the backend).

Used by target_compile.py (what to compile for the target GPU) and by the audit's compile-count probe (how many
binaries a series of calls really needs: distinct keys).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SPEC_TARGET_CC = 90  # the backend whose alignment rules decide "D" (divisible by 16); the same for every NVIDIA cc
_BINDERS: dict[Any, Any] = {}  # raw Python function -> (JITFunction twin, binder), built once per kernel
_UNSERIALISABLE = "unserialisable"
_OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid")


@dataclass
class LaunchSpec:
    """One launch's specialisation: enough for a fresh process to compile the same binary for a GPU."""

    kernel: str  # the kernel's __name__
    qualname: str
    module: str
    file: str
    params: list[dict[str, Any]]  # per parameter: name, type ("*fp32", "i32", "constexpr", ...), attr ("D", "1", "")
    options: dict[str, Any] = field(default_factory=dict)  # num_warps, num_stages, ... as the launch passed them
    autotuned: bool = False  # an @triton.autotune wrapper chose the launch's config (compile every config offered)
    heuristics: dict[str, Any] = field(default_factory=dict)  # values @triton.heuristics computed for this launch
    error: str | None = None  # why no specialisation could be taken (a note, not a failure)
    full_size: bool = False  # taken by the dry run at the problem's full size (dry_launch.py), not a case that ran
    # The configs an @autotune's pruning kept for this launch (config_signature each; None: no pruning seen): a GPU
    # never compiles the others (a 16-row x 16384 tile its prune drops took ptxas minutes here)
    kept: list[str] | None = None
    # The tier of the calls that launched it (LaunchRecorder.origin): contract, or robustness with its kind
    tier: str = "contract"
    kind: str | None = None

    def key(self) -> str:
        """Triton's cache key for this launch in a stable text form (same key, same binary)."""
        return json.dumps([self.file, self.qualname, self.params, sorted(self.options.items())]
                          + ([sorted(self.kept)] if self.kept is not None else []), sort_keys=True, default=str)

    def short_key(self) -> str:
        """A short hash of key(): how a compile row names the specialisation it belongs to."""
        return hashlib.sha1(self.key().encode()).hexdigest()[:16]

    def as_dict(self) -> dict[str, Any]:
        """The JSON the compile child reads."""
        return {"kernel": self.kernel, "qualname": self.qualname, "module": self.module, "file": self.file,
                "params": self.params, "options": self.options, "autotuned": self.autotuned,
                "heuristics": self.heuristics, "full_size": self.full_size, "kept": self.kept}


def _value(v: Any) -> Any:
    """A constexpr value in JSON (a tl.dtype by name); _UNSERIALISABLE for what a fresh process cannot rebuild."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (tuple, list)):
        return [_value(x) for x in v]
    try:
        import triton.language as tl

        if isinstance(v, tl.dtype):
            return {"tl_dtype": str(v)}
        if isinstance(v, tl.constexpr):
            return _value(v.value)
    except ImportError:  # pragma: no cover - the worker always has triton
        pass
    return _UNSERIALISABLE


def _binder(kernel: Any) -> tuple[Any, Any]:
    """(JITFunction twin of the kernel's Python function, Triton's binder for it); cached per function."""
    fn = kernel.fn
    got = _BINDERS.get(fn)
    if got is None:
        from triton.backends.compiler import GPUTarget
        from triton.compiler import make_backend
        from triton.runtime.jit import JITFunction, create_function_from_signature

        kw = dict(getattr(kernel, "kwargs", None) or {})  # InterpretedFunction keeps jit()'s keyword arguments
        twin = kernel if isinstance(kernel, JITFunction) else JITFunction(
            fn, do_not_specialize=kw.get("do_not_specialize"),
            do_not_specialize_on_alignment=kw.get("do_not_specialize_on_alignment"))
        backend = make_backend(GPUTarget("cuda", SPEC_TARGET_CC, 32))
        got = _BINDERS[fn] = (twin, create_function_from_signature(twin.signature, twin.params, backend))
    return got


def launch_spec(kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any], wrapper: Any = None) -> LaunchSpec:
    """The specialisation of one launch of `kernel` (a JITFunction or an InterpretedFunction) with these arguments;
    `wrapper` is the outermost Autotuner/Heuristics that launched it, if any."""
    fn = kernel.fn
    code = getattr(fn, "__code__", None)
    spec = LaunchSpec(kernel=getattr(fn, "__name__", "kernel"), qualname=getattr(fn, "__qualname__", ""),
                      module=getattr(fn, "__module__", ""), file=code.co_filename if code else "", params=[])
    kw = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
    try:
        twin, binder = _binder(kernel)
        bound, specialization, options = binder(*args, **kw)
    except Exception as e:  # noqa: BLE001 - an argument Triton itself would refuse: the launch reports it
        spec.error = f"{type(e).__name__}: {str(e)[:200]}"
        return spec
    try:
        for p, (ty, attr) in zip(twin.params, specialization):
            if ty == "constexpr":
                val = _value(attr)
                if val == _UNSERIALISABLE:
                    spec.error = f"constexpr {p.name} is a {type(attr).__name__}: a fresh process cannot rebuild it"
                spec.params.append({"name": p.name, "type": "constexpr", "value": val})
            else:
                spec.params.append({"name": p.name, "type": _value(ty), "attr": _value(attr)})
    except (TypeError, ValueError) as e:  # a tuple argument's nested specialisation: not rebuilt here
        spec.error = f"{type(e).__name__}: {str(e)[:200]}"
    spec.options = {k: _value(v) for k, v in options.items() if k in _OPTION_KEYS}
    spec.autotuned = _is_autotuner(wrapper)
    return spec


def _is_autotuner(obj: Any) -> bool:
    """Whether obj or an object it wraps is an @triton.autotune wrapper."""
    for _ in range(8):
        if obj is None:
            return False
        if type(obj).__name__ == "Autotuner":
            return True
        obj = getattr(obj, "fn", None)
    return False


def config_signature(cfg: Any) -> str:
    """A triton.Config as text, the same in the worker and the compile child: its plain-valued kwargs and options."""
    kw = cfg.all_kwargs() if hasattr(cfg, "all_kwargs") else dict(getattr(cfg, "kwargs", {}))
    return json.dumps(sorted((k, v) for k, v in kw.items() if isinstance(v, (int, float, bool, str))))


def distinct_keys(specs: list[LaunchSpec]) -> dict[str, int]:
    """Per kernel name, how many distinct binaries these launches need (Triton compiles once per key)."""
    keys: dict[str, set[str]] = {}
    for s in specs:
        if s.error is None:
            keys.setdefault(s.kernel, set()).add(s.key())
    return {k: len(v) for k, v in keys.items()}


def source_hash(path: str) -> str:
    """Content hash of a kernel's file and the .py files beside it (the helpers it may import or call)."""
    h = hashlib.sha256()
    p = Path(path)
    try:
        h.update(p.read_bytes())
    except OSError:
        return ""
    for q in sorted(p.parent.glob("*.py")):
        try:
            if q != p and q.stat().st_size < 1 << 20:
                h.update(q.name.encode() + b"\0" + q.read_bytes())
        except OSError:
            continue
    return h.hexdigest()
