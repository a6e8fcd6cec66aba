"""Honesty guards around one candidate call: launches, PyTorch compute, threads, streams, patches.

These come from the reward hacks kernel benchmarks have had to defend against (KernelBench, GPU MODE):
a "kernel" that computes in PyTorch, calls the reference, works on a side stream or thread, or patches
the timers and comparison functions the harness relies on.
"""

from __future__ import annotations

import operator
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ..confine import refseal
from ..confine.refwatch import RefWatch
from ..device.runtime import RECORDER, launch_hook
from .memory import dynamo_loaded
from .poison import POISON, fill_poison

# Ops that do real math; seeing one of these on the whole input is PyTorch doing the candidate's work.
HEAVY_OPS = {
    "mm", "bmm", "addmm", "addbmm", "baddbmm", "matmul", "linear", "convolution", "_convolution", "conv2d",
    "_softmax", "softmax", "_log_softmax", "log_softmax", "native_layer_norm", "layer_norm", "native_group_norm",
    "native_batch_norm", "_native_batch_norm_legit", "rms_norm", "_fused_rms_norm", "cumsum", "cumprod", "logsumexp",
    "nll_loss_forward", "nll_loss2d_forward", "cross_entropy_loss", "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_flash_attention_for_cpu", "scaled_dot_product_attention", "sort", "topk", "einsum",
    "_cdist_forward", "embedding", "scatter_add", "index_add",
}
# Ops that only allocate, move or reinterpret data: a wrapper may use them freely.
DATA_OPS = {
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "new_zeros",
    "ones", "ones_like", "new_ones", "full", "full_like", "new_full", "fill_", "zero_", "copy_", "_to_copy",
    "clone", "contiguous", "view", "_unsafe_view", "reshape", "as_strided", "t", "transpose", "permute",
    "expand", "slice", "select", "unsqueeze", "squeeze", "detach", "alias", "lift_fresh", "lift_fresh_copy",
    "resize_", "set_", "split", "split_with_sizes", "chunk", "narrow", "unbind", "cat", "stack", "arange",
    "_local_scalar_dense", "is_nonzero", "flatten", "unflatten", "expand_as", "view_as", "_reshape_alias",
    "randn", "rand", "randint", "normal_", "uniform_", "random_", "record_stream", "_has_compatible_shallow_copy_type",
    "_conj", "_neg_view", "conj", "resolve_conj", "resolve_neg", "view_as_real", "view_as_complex", "sym_size",
    "sym_stride", "sym_numel", "sym_storage_offset", "_pin_memory", "is_pinned", "item", "to", "type_as",
    "squeeze_", "unsqueeze_", "t_", "transpose_", "as_strided_", "detach_", "scalar_tensor",
    "dim", "size", "stride", "numel", "_copy_from", "_copy_from_and_resize", "set_data", "clamp_min", "max_unpool",
}


# Allocations whose contents are undefined: poisoned while a candidate runs, whichever API reached them.
ALLOC_OPS = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"}


def _op_name(func: Any) -> str:
    name = getattr(func, "__name__", str(func))  # e.g. "mm.default"
    return name.split(".")[0]


def _numel(x: Any) -> int:
    if isinstance(x, torch.Tensor):
        return x.numel()
    if isinstance(x, (list, tuple)):
        return max((_numel(v) for v in x), default=0)
    return 0


class OpRecorder(TorchDispatchMode):
    """Records the aten ops the candidate runs itself (Triton's own launch code is skipped)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch wraps a mode's __torch_dispatch__ in torch._disable_dynamo, whose first call imports torch._dynamo
        # (issue 28: 1.5 s on the dev CPU, 3.9 s on the H200, on a worker's first validation). __torch_dispatch__
        # below applies that same wrapper itself, once torch._dynamo is loaded: until then there is no compiled
        # frame to keep out of this mode.
        return False

    def __init__(self) -> None:
        super().__init__()
        self.heavy: Counter[str] = Counter()
        self.compute: Counter[str] = Counter()
        self.compute_elems = 0
        self.elems_by_op: Counter[str] = Counter()  # composition.py compares them with the reference's

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if dynamo_loaded():  # before that, no compiled frame can run
            return _record_no_dynamo(self, func, types, args, kwargs)
        return self._record(func, args, kwargs)

    def _record(self, func: Any, args: Any, kwargs: Any) -> Any:
        out = func(*args, **(kwargs or {}))
        if RECORDER.in_launch or threading.get_ident() != RECORDER.owner:
            return out
        name = _op_name(func)
        if name in ALLOC_OPS and POISON.active and isinstance(out, torch.Tensor):
            fill_poison(out)  # torch.ops.aten.empty_like & co. bypass the torch.empty wrappers of poison.py
        if name in DATA_OPS:
            return out
        elems = max(_numel(args), _numel(out))
        if name in HEAVY_OPS:
            self.heavy[name] += 1
        self.compute[name] += 1
        self.compute_elems += elems
        self.elems_by_op[name] += elems
        return out


# torch's own wrapper (what TorchDispatchMode.__init_subclass__ would have installed), for when dynamo is loaded.
_record_no_dynamo = torch._disable_dynamo(
    lambda self, func, types, args, kwargs: self._record(func, args, kwargs), recursive=True)


@dataclass
class CallEvidence:
    """What the guards saw during one candidate call."""

    launches: int = 0
    kernels: list[str] = field(default_factory=list)
    heavy_ops: dict[str, int] = field(default_factory=dict)
    compute_ops: dict[str, int] = field(default_factory=dict)
    compute_elems: int = 0
    elems_by_op: dict[str, int] = field(default_factory=dict)
    triton_arg_bytes: int = 0  # bytes of the tensors the Triton launches received
    triton_gpu_ms: float | None = None  # CUDA events around the launches (only when timed)
    call_gpu_ms: float | None = None  # the whole call on the stream, same events
    reference_called: bool = False
    threads_started: int = 0
    streams: list[str] = field(default_factory=list)
    patched: list[str] = field(default_factory=list)


HARNESS_MODULES = ("tasks", "cases", "validate", "run_validation", "kernelbench", "loader", "ref_cache", "composition",
                   "case_log")


def _watched() -> tuple[list[tuple[str, Any]], list[tuple[str, type]]]:
    """Namespaces whose functions the harness (or the reference) relies on: modules and classes."""
    import builtins
    import json
    import math

    import torch.nn.functional
    import triton.testing

    from ... import protocol
    from ..confine import refseal
    from ..device import runtime
    from . import compare, errors_fmt, poison

    # The modules that run the cases are looked up, not imported: they import this one (no import circle), and
    # by the time a candidate runs they are loaded.
    harness = [sys.modules[f"{__package__}.{n}"] for n in HARNESS_MODULES if f"{__package__}.{n}" in sys.modules]

    modules: list[tuple[str, Any]] = [
        ("builtins", builtins), ("math", math), ("time", time), ("json", json), ("torch", torch),
        ("torch.nn.functional", torch.nn.functional), ("torch.linalg", torch.linalg),
        ("torch.testing", torch.testing), ("torch.cuda", torch.cuda), ("triton.testing", triton.testing),
    ]
    classes: list[tuple[str, type]] = [("torch.Tensor", torch.Tensor), ("torch.cuda.Event", torch.cuda.Event)]
    # The harness's own code: a candidate runs in this process and could rebind compare() or Validator.
    for mod in (compare, errors_fmt, sys.modules[__name__], poison, protocol, refseal, runtime, *harness):
        modules.append((mod.__name__, mod))
        classes += [(f"{mod.__name__}.{k}", v) for k, v in vars(mod).items()
                    if isinstance(v, type) and v.__module__ == mod.__name__]
    return modules, classes


def _is_function_like(name: str, value: Any, module: bool) -> bool:
    if value is None or isinstance(value, (type(sys), str, bytes, int, float, bool, tuple, list, dict, set)):
        return False
    if module and name.startswith("_") and name not in ("__import__", "__build_class__"):
        return False
    return callable(value) or hasattr(value, "__get__")


def _class_entries(cls: type) -> dict[str, Any]:
    # What attribute lookup on the class finds, as raw dict entries (a patch on torch.Tensor shadows
    # the inherited C method; getattr would hand back fresh bound objects for classmethods).
    merged: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        merged.update(vars(klass))
    return merged


_TORCH_DIR = str(Path(torch.__file__).resolve().parent)


def _torch_rewrap(orig: Any, new: Any) -> bool:
    """True when torch itself re-wrapped one of its functions (importing torch._dynamo rebinds
    torch.manual_seed to a functools.wraps wrapper of the original): not a user patch."""
    code = getattr(new, "__code__", None)
    if code is None or not str(Path(code.co_filename).resolve()).startswith(_TORCH_DIR):
        return False
    seen = 0
    while new is not None and seen < 8:
        new, seen = getattr(new, "__wrapped__", None), seen + 1
        if new is orig:
            return True
    return False


class PatchWatch:
    """Snapshot of the functions a harness relies on; detects and undoes user monkeypatching.

    Every public function of the modules in `_watched()` and every attribute of its classes is
    compared by identity after each candidate call (and after a candidate's import): timers,
    comparison functions, the torch ops a reference computes with, builtins such as all() and the
    validator's own functions.
    """

    def __init__(self) -> None:
        modules, classes = _watched()
        self.modules = [(n, m, {k: v for k, v in vars(m).items() if _is_function_like(k, v, True)})
                        for n, m in modules]
        self.classes = [(n, c, {k: v for k, v in _class_entries(c).items() if _is_function_like(k, v, False)})
                        for n, c in classes]
        self._fast: list[tuple[Any, tuple[str, ...], tuple[Any, ...], frozenset[str] | None]] = []
        # The builtins the fast check runs on, held from before any candidate ran: a candidate that patches
        # builtins.all must not be able to make the check itself say "unchanged".
        self._all, self._map, self._is = all, map, operator.is_
        self._ref_check = refseal.check_and_restore  # held, like the builtins: a rebinding cannot silence it
        self._snap_raw()

    def _snap_raw(self) -> None:
        """The raw namespaces behind the snapshot, for `_unchanged`: each watched module's dict (watched keys and
        their values) and each watched class's own dict and those of its bases (every key, the function-like
        values). Taken when the snapshot and the live objects agree (at start, and after each restore)."""
        fast = []
        for _, mod, snap in self.modules:
            keys = tuple(snap)
            fast.append((vars(mod), keys, tuple(snap[k] for k in keys), None))
        seen: set[int] = set()
        for _, cls, _ in self.classes:
            for klass in cls.__mro__:
                if id(klass) in seen:
                    continue
                seen.add(id(klass))
                d = vars(klass)
                keys = tuple(k for k, v in d.items() if _is_function_like(k, v, False))
                fast.append((d, keys, tuple(d[k] for k in keys), frozenset(d)))
        self._fast = fast

    def _unchanged(self) -> bool:
        """True when no watched namespace changed since `_snap_raw`: the same object under every watched key and,
        for classes, the same set of keys (a new key in a subclass could shadow a base's function). Identity
        tests at C speed; the full check (merging every class's MRO) cost 0.18 ms per candidate call."""
        for d, keys, values, all_keys in self._fast:
            if all_keys is not None and d.keys() != all_keys:
                return False
            if not self._all(self._map(self._is, self._map(d.get, keys), values)):
                return False
        return True

    def check_and_restore(self) -> list[str]:
        """Names patched since the snapshot (restored to the originals), the sealed reference's included."""
        in_reference = self._ref_check()
        if self._unchanged():
            return in_reference
        changed = self._check_and_restore()
        self._snap_raw()  # the live objects match the snapshot again (restored, or torch's own re-wraps taken)
        return changed + in_reference

    def _check_and_restore(self) -> list[str]:
        changed = []
        for prefix, mod, snap in self.modules:
            now = vars(mod)
            for key, orig in snap.items():
                new = now.get(key)
                if new is orig:
                    continue
                if _torch_rewrap(orig, new):
                    snap[key] = new
                    continue
                changed.append(f"{prefix}.{key}")
                setattr(mod, key, orig)
        for prefix, cls, snap in self.classes:
            now = _class_entries(cls)
            for key, orig in snap.items():
                if now.get(key) is not orig:
                    changed.append(f"{prefix}.{key}")
                    try:
                        setattr(cls, key, orig)
                    except (AttributeError, TypeError):  # pragma: no cover - immutable (C) type
                        pass
        return changed


class guarded_call:
    """Context manager: run one candidate call under every guard; fills `evidence`."""

    def __init__(self, ref_file: str | None, patches: PatchWatch, time_gpu: bool = False):
        self.ref_file = ref_file
        self.patches = patches
        self.time_gpu = time_gpu and torch.cuda.is_available()  # composition.py: Triton's share of the GPU time
        self._call_events: tuple[Any, Any] | None = None
        self.evidence = CallEvidence()
        self._recorder = OpRecorder()

    def _reference_hit(self) -> None:
        self.evidence.reference_called = True

    def __enter__(self) -> CallEvidence:
        RECORDER.reset()
        RECORDER.owner = threading.get_ident()
        self._threads0 = threading.active_count()
        self._orig_start = threading.Thread.start
        ev = self.evidence

        def start(thread_self: threading.Thread, *a: Any, **k: Any) -> Any:
            if not RECORDER.in_launch:
                ev.threads_started += 1
            return self._orig_start(thread_self, *a, **k)

        threading.Thread.start = start  # type: ignore[method-assign]
        self._stream0 = torch.cuda.current_stream() if torch.cuda.is_available() else None
        self._orig_stream_init = torch.cuda.Stream.__new__

        def stream_new(cls: Any, *a: Any, **k: Any) -> Any:
            # torch.cuda.current_stream() wraps an existing stream through Stream(stream_id=...); only a
            # brand-new stream outside Triton's own launch/autotune machinery is the candidate's doing.
            if "stream_id" not in k and not RECORDER.in_launch:
                ev.streams.append("torch.cuda.Stream created")
            return self._orig_stream_init(cls, *a, **k)

        torch.cuda.Stream.__new__ = stream_new  # type: ignore[method-assign]
        self._refwatch = RefWatch(self.ref_file, self._reference_hit) if self.ref_file else None
        if self._refwatch is not None:
            self._refwatch.__enter__()
        self._recorder.__enter__()
        self._hook = launch_hook(torch.cuda.is_available() and not RECORDER.interpreter)
        self._hook.__enter__()
        if self.time_gpu:
            RECORDER.timing = True
            self._call_events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            self._call_events[0].record()
        return ev

    def _call_gpu_times(self, ev: CallEvidence, failed: bool) -> None:
        assert self._call_events is not None
        times = None if failed else _gpu_times(self._call_events, RECORDER.events)
        if times is not None:
            ev.triton_gpu_ms, ev.call_gpu_ms = round(times[0], 4), round(times[1], 4)

    def __exit__(self, *exc: Any) -> None:
        self._hook.__exit__(*exc)
        self._recorder.__exit__(*exc)
        if self._refwatch is not None:
            self._refwatch.__exit__(*exc)
        threading.Thread.start = self._orig_start  # type: ignore[method-assign]
        torch.cuda.Stream.__new__ = self._orig_stream_init  # type: ignore[method-assign]
        ev = self.evidence
        if self._stream0 is not None and torch.cuda.current_stream() != self._stream0:
            ev.streams.append("current stream changed and not restored")
            torch.cuda.set_stream(self._stream0)
        ev.launches = RECORDER.count
        ev.kernels = sorted(set(RECORDER.names))
        ev.heavy_ops = dict(self._recorder.heavy)
        ev.compute_ops = dict(self._recorder.compute)
        ev.compute_elems = self._recorder.compute_elems
        ev.elems_by_op = dict(self._recorder.elems_by_op)
        ev.triton_arg_bytes = RECORDER.arg_bytes
        if self._call_events is not None:
            RECORDER.timing = False
            self._call_gpu_times(ev, exc[0] is not None)
        ev.patched = self.patches.check_and_restore()


def _gpu_times(call: tuple[Any, Any], launches: list[tuple[Any, Any]]) -> tuple[float, float] | None:
    """(ms of the Triton launches, ms of the whole call) on the stream, from the recorded CUDA events."""
    try:
        call[1].record()
        call[1].synchronize()
        total = call[0].elapsed_time(call[1])
        triton = sum(a.elapsed_time(b) for a, b in launches)
    except Exception:  # noqa: BLE001 - a launch on another stream, or a failed call: no share, not a failure
        return None
    return triton, total
