"""Honesty guards around one candidate call: launches, PyTorch compute, threads, streams, patches.

These come from the reward hacks kernel benchmarks have had to defend against (KernelBench, GPU MODE):
a "kernel" that computes in PyTorch, calls the reference, works on a side stream or thread, or patches
the timers and comparison functions the harness relies on.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from .runtime import RECORDER

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
    "squeeze_", "unsqueeze_", "t_", "transpose_", "as_strided_", "detach_", "new_empty_strided", "scalar_tensor",
    "dim", "size", "stride", "numel", "_copy_from", "_copy_from_and_resize", "set_data", "clamp_min", "max_unpool",
}


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

    def __init__(self) -> None:
        super().__init__()
        self.heavy: Counter[str] = Counter()
        self.compute: Counter[str] = Counter()
        self.compute_elems = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        if RECORDER.in_launch or threading.get_ident() != RECORDER.owner:
            return out
        name = _op_name(func)
        if name in DATA_OPS:
            return out
        elems = max(_numel(args), _numel(out))
        if name in HEAVY_OPS:
            self.heavy[name] += 1
        self.compute[name] += 1
        self.compute_elems += elems
        return out


@dataclass
class CallEvidence:
    """What the guards saw during one candidate call."""

    launches: int = 0
    kernels: list[str] = field(default_factory=list)
    heavy_ops: dict[str, int] = field(default_factory=dict)
    compute_ops: dict[str, int] = field(default_factory=dict)
    compute_elems: int = 0
    reference_called: bool = False
    threads_started: int = 0
    streams: list[str] = field(default_factory=list)
    patched: list[str] = field(default_factory=list)


def _patch_targets() -> dict[str, tuple[Any, str]]:
    import triton.testing

    targets: dict[str, tuple[Any, str]] = {
        "time.time": (time, "time"), "time.perf_counter": (time, "perf_counter"),
        "time.perf_counter_ns": (time, "perf_counter_ns"), "time.monotonic": (time, "monotonic"),
        "time.process_time": (time, "process_time"),
        "torch.allclose": (torch, "allclose"), "torch.equal": (torch, "equal"), "torch.isclose": (torch, "isclose"),
        "torch.testing.assert_close": (torch.testing, "assert_close"),
        "torch.Tensor.__eq__": (torch.Tensor, "__eq__"), "torch.Tensor.allclose": (torch.Tensor, "allclose"),
        "torch.cuda.synchronize": (torch.cuda, "synchronize"), "torch.cuda.Event": (torch.cuda, "Event"),
        "torch.cuda.Event.elapsed_time": (torch.cuda.Event, "elapsed_time"),
        "torch.cuda.Event.record": (torch.cuda.Event, "record"),
        "triton.testing.do_bench": (triton.testing, "do_bench"),
    }
    return targets


class PatchWatch:
    """Snapshot of the functions a harness relies on; detects and undoes user monkeypatching."""

    def __init__(self) -> None:
        self.targets = _patch_targets()
        self.originals = {k: getattr(obj, attr) for k, (obj, attr) in self.targets.items()}

    def check_and_restore(self) -> list[str]:
        """Names patched since the snapshot (restored to the originals)."""
        changed = []
        for key, (obj, attr) in self.targets.items():
            if getattr(obj, attr, None) is not self.originals[key]:
                changed.append(key)
                setattr(obj, attr, self.originals[key])
        return changed


class guarded_call:
    """Context manager: run one candidate call under every guard; fills `evidence`."""

    def __init__(self, ref_file: str | None, patches: PatchWatch):
        self.ref_file = ref_file
        self.patches = patches
        self.evidence = CallEvidence()
        self._recorder = OpRecorder()

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename == self.ref_file:
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
            ev.streams.append("torch.cuda.Stream created")
            return self._orig_stream_init(cls, *a, **k)

        torch.cuda.Stream.__new__ = stream_new  # type: ignore[method-assign]
        if self.ref_file:
            sys.setprofile(self._profile)
        self._recorder.__enter__()
        return ev

    def __exit__(self, *exc: Any) -> None:
        self._recorder.__exit__(*exc)
        sys.setprofile(None)
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
        ev.patched = self.patches.check_and_restore()
