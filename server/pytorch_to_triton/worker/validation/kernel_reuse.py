"""Reuse compiled kernels and autotuning results across calls when a user file has not changed.

Every call re-imports the user's files (tasks.load_module: a fresh module, so edits are always seen), which gives
every @triton.jit function a fresh, empty in-memory cache: each specialization then goes through Triton's key
computation and on-disk cache lookup and loads its binary again, and every autotuned kernel re-benchmarks all its
configs. When the file and its folder's .py files are unchanged, the new objects adopt the previous import's caches:

* a JITFunction adopts the compiled kernels of its predecessor only when both have the same `cache_key`, Triton's
  own hash of the source and of every global the kernel reads (so a changed constant or helper never reuses code);
* an Autotuner or Heuristics wrapper adopts the chosen configs only when its configs and key are the same.

Triton's internals differ between versions (3.6 / 3.9): every attribute is feature-detected, any failure simply
means no reuse. P2T_REUSE_KERNELS=0 turns it off.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from types import ModuleType
from typing import Any

# path -> (fingerprint, {module attribute: its Triton objects, outermost first}) of the file's latest import. It
# keeps that one import's objects (and so its module's globals) alive until the next import of the file; adopted
# kernels reference them anyway. A module holding tensors at import is not remembered (see adopt).
_STATE: dict[str, tuple[str, dict[str, list[Any]]]] = {}
MAX_LEVELS = 8  # Autotuner -> Heuristics -> JITFunction chains are 1-3 deep


def enabled() -> bool:
    """Off with P2T_REUSE_KERNELS=0."""
    return os.environ.get("P2T_REUSE_KERNELS", "1") != "0"


def fingerprint(path: Path) -> str:
    """The file's content plus name, mtime and size of every .py file beside it (helpers it may import)."""
    h = hashlib.sha1(path.read_bytes())
    for p in sorted(path.parent.glob("*.py")):
        try:
            st = p.stat()
        except OSError:
            continue
        h.update(f"{p.name}:{st.st_mtime_ns}:{st.st_size};".encode())
    return h.hexdigest()


def _levels(obj: Any) -> list[Any]:
    """obj and the objects it wraps (`.fn`), while they are Triton runtime objects."""
    out: list[Any] = []
    while obj is not None and type(obj).__module__.startswith("triton.runtime") and len(out) < MAX_LEVELS:
        out.append(obj)
        obj = getattr(obj, "fn", None)
    return out


def _tune_id(level: Any) -> str:
    # Config's str() lists its kwargs, warps, stages (its repr is only an address)
    configs = [str(c) for c in getattr(level, "configs", None) or []]
    return repr((configs, getattr(level, "keys", None) or getattr(level, "key", None)))


def _adopt_level(new: Any, old: Any) -> int:
    """Give `new` the caches of `old` (its predecessor) where they are provably the same; the number adopted."""
    if type(new) is not type(old):
        return 0
    n = 0
    new_caches, old_caches = getattr(new, "device_caches", None), getattr(old, "device_caches", None)
    if isinstance(new_caches, dict) and isinstance(old_caches, dict) and old_caches and \
            new.cache_key == old.cache_key:
        for device, entry in old_caches.items():
            new_caches.setdefault(device, entry)
        n += 1
    new_tuned, old_tuned = getattr(new, "cache", None), getattr(old, "cache", None)
    if isinstance(new_tuned, dict) and isinstance(old_tuned, dict) and old_tuned and hasattr(new, "configs") and \
            _tune_id(new) == _tune_id(old):
        for key, config in old_tuned.items():
            new_tuned.setdefault(key, config)
        timings = getattr(old, "configs_timings", None)
        if timings and not getattr(new, "configs_timings", None):
            new.configs_timings = timings  # what the benchmark's autotune report shows
        n += 1
    return n


def _holds_tensors(mod: ModuleType) -> bool:
    import torch

    for value in vars(mod).values():
        if isinstance(value, torch.Tensor) or isinstance(value, (list, tuple, dict)) and any(
                isinstance(v, torch.Tensor) for v in (value.values() if isinstance(value, dict) else value)):
            return True
    return False


def adopt(mod: ModuleType, path: Path) -> int:
    """After a fresh import of `path`: adopt the previous import's caches when the file and its folder are
    unchanged, then remember this import's objects for the next one. Returns the number of caches adopted."""
    if not enabled():
        return 0
    key = str(path)
    try:
        fp = fingerprint(path)
        objs = {name: _levels(obj) for name, obj in vars(mod).items()}
        objs = {name: lv for name, lv in objs.items() if lv}
        prev = _STATE.get(key)
        n = 0
        if prev is not None and prev[0] == fp:
            for name, levels in objs.items():
                old = prev[1].get(name)
                if old is not None and len(old) == len(levels):
                    n += sum(_adopt_level(a, b) for a, b in zip(levels, old))
        if _holds_tensors(mod):
            # Remembering would keep the module's tensors alive past the call, and the worker is replaced when a
            # call leaves device memory behind: for such a file a fresh import every call is the cheaper path.
            _STATE.pop(key, None)
        else:
            _STATE[key] = (fp, objs)
        return n
    except Exception:  # noqa: BLE001 - reuse is an optimization; an unknown Triton layout means none
        _STATE.pop(key, None)
        return 0
