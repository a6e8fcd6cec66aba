"""What one candidate call is made of (Triton kernels, library ops) and when that makes it fail.

Keeping a matmul in cuBLAS or a convolution in cuDNN and fusing the epilogue in Triton is a design choice, and
often the fastest one (FlashAttention and torch.compile keep their projections in cuBLAS), so a library op beside
Triton kernels is *disclosed* (the case's `composition`, the report's composition line), not failed. A candidate
fails `pytorch_compute` only when PyTorch produces the result itself:

- the reference's own op sequence runs again in the candidate: every compute op the reference ran, as often and
  over at least RECOMPUTE_FRACTION of its elements (a Triton kernel beside it only moves the result);
- the Triton kernels' work is negligible next to the output: the tensors handed to every launch of the call hold
  fewer bytes than NEGLIGIBLE_FRACTION of the output's. A kernel that produces the output writes every byte of it
  (100%), and one that computes a fused epilogue reads and writes at least that; 10% leaves room for a kernel
  that writes half-precision statistics of a float32 output and still fails a token kernel on a scalar;
- or the task requires it (`require = ["all_triton"]`, run_suite's all_triton): then any PyTorch compute op over
  at least half the input's elements, or any heavy op, fails as before.

A call with no Triton launch for a non-empty output is `no_triton_launch` (validate.py keeps that check's name).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import torch

from .guards import HEAVY_OPS, CallEvidence, OpRecorder


class Finder(Protocol):
    """What the judge needs of the Validator (validate.py imports this module: no import back)."""

    def find(self, check: str, case: str, message: str, evidence: Any = None, severity: str = "fail") -> None: ...


NEGLIGIBLE_FRACTION = 0.10
RECOMPUTE_FRACTION = 0.5  # the candidate's op covers at least half the elements the reference's did
ALL_TRITON = "all_triton"

# aten op -> (what it is, the library that runs it on a GPU)
LIBRARY: dict[str, tuple[str, str]] = {
    **{op: ("matmul", "cuBLAS") for op in ("mm", "bmm", "addmm", "addbmm", "baddbmm", "matmul", "linear", "einsum")},
    **{op: ("convolution", "cuDNN") for op in ("convolution", "_convolution", "conv2d")},
    **{op: ("attention", "SDPA") for op in ("_scaled_dot_product_flash_attention",
                                             "_scaled_dot_product_efficient_attention",
                                             "_scaled_dot_product_cudnn_attention",
                                             "_scaled_dot_product_flash_attention_for_cpu",
                                             "scaled_dot_product_attention")},
}


def requires_all_triton(args: dict[str, Any]) -> bool:
    """True when the task or the call asks for Triton only (`require` carries "all_triton")."""
    return ALL_TRITON in (args.get("require") or [])


def output_bytes(ref_meta: list[tuple[Any, ...]]) -> int:
    """Bytes of the reference's outputs, from validate's (shape, dtype, device, is_tensor) metadata."""
    total = 0
    for shape, dtype, *_ in ref_meta:
        try:
            total += math.prod(shape) * torch.empty((), dtype=dtype).element_size()
        except (TypeError, RuntimeError):
            continue
    return total


def _kind(op: str) -> tuple[str, str]:
    if op in LIBRARY:
        return LIBRARY[op]
    return ("heavy op" if op in HEAVY_OPS else "elementwise/reduction op"), "PyTorch"


class Composer:
    """Per validation: the reference's op multiset (recorded once), the cases' compositions, the verdict rules."""

    def __init__(self, args: dict[str, Any], device: str):
        self.all_triton = requires_all_triton(args)
        self.device = device
        self.ref_ops: Counter[str] | None = None
        self.ref_elems: Counter[str] = Counter()
        self.ref_out_elems: int | None = None  # the output size of the case the reference's ops were recorded at
        self.first: dict[str, Any] | None = None
        self.kernels: set[str] = set()
        self._timed: set[str] = set()

    @contextmanager
    def reference(self) -> Iterator[None]:
        """Run the native reference under the op recorder the first time (its compute ops, for the recompute rule)."""
        if self.ref_ops is not None:
            yield
            return
        rec = OpRecorder()
        with rec:
            yield
        if sum(rec.elems_by_op.values()) > 0:  # an empty case's ops say nothing about sizes: record a later one
            self.ref_ops, self.ref_elems = Counter(rec.compute), Counter(rec.elems_by_op)
            self.ref_out_elems = None  # set by the judge of this same case

    def wants_timing(self, label: str) -> bool:
        """Time the launches with CUDA events once per case label (a few microseconds per launch, not every run)."""
        if self.device != "cuda" or label in self._timed:
            return False
        self._timed.add(label)
        return True

    def _recomputed(self, ev: CallEvidence, out_elems: int) -> list[str]:
        """The reference's compute ops, when the candidate ran every one of them at the reference's scale (elements
        per output element, so a case of another size compares fairly); else []."""
        if not self.ref_ops:
            return []
        if self.ref_out_elems is None:
            self.ref_out_elems = out_elems
        scale = out_elems / self.ref_out_elems if self.ref_out_elems else 1.0
        for op, n in self.ref_ops.items():
            if ev.compute_ops.get(op, 0) < n:
                return []
            if ev.elems_by_op.get(op, 0) < RECOMPUTE_FRACTION * self.ref_elems.get(op, 0) * scale:
                return []
        return sorted(self.ref_ops)

    def judge(self, v: Finder, ev: CallEvidence, case: str, in_elems: int, out_elems: int,
              out_bytes: int) -> dict[str, Any]:
        """Findings from what ran (into v), and the call's composition (for the case record)."""
        comp = self.composition(ev)
        library = {op: n for op, n in ev.compute_ops.items() if op in HEAVY_OPS}
        big = in_elems >= 64 and ev.compute_elems >= 0.5 * in_elems
        if ev.launches == 0:
            if out_elems > 0:
                v.find("no_triton_launch", case, "no Triton kernel was launched for a non-empty output",
                       {"pytorch_ops": ev.compute_ops})
            return comp
        recomputed = self._recomputed(ev, out_elems)
        if self.all_triton and (library or (big and ev.compute_ops)):
            v.find("pytorch_compute", case, "PyTorch computes part of the result outside Triton, and the task "
                   "requires all_triton", {"ops": ev.compute_ops, "elements_touched": ev.compute_elems,
                                           "input_elements": in_elems, "rule": "all_triton"})
        elif recomputed:
            v.find("pytorch_compute", case, f"PyTorch produces the result itself: the candidate runs every compute op "
                   f"of the reference ({', '.join(recomputed)}) at the reference's size; its Triton kernels only "
                   "move the result", {"ops": ev.compute_ops, "reference_ops": dict(self.ref_ops or {}),
                                       "rule": "reference_recomputed"})
        elif out_bytes > 0 and ev.triton_arg_bytes < NEGLIGIBLE_FRACTION * out_bytes and (library or big):
            v.find("pytorch_compute", case, f"PyTorch produces the result itself: the Triton launches received "
                   f"{ev.triton_arg_bytes} bytes of tensors, under {NEGLIGIBLE_FRACTION:.0%} of the "
                   f"{out_bytes}-byte output, while PyTorch ran {', '.join(sorted(ev.compute_ops))}",
                   {"ops": ev.compute_ops, "triton_arg_bytes": ev.triton_arg_bytes, "output_bytes": out_bytes,
                    "rule": "negligible_triton"})
        elif library or (big and ev.compute_ops):
            v.find("library_compute", case, f"design: {comp['line']} (allowed; require all_triton to forbid)",
                   {"ops": ev.compute_ops}, severity="warn")
        elif ev.compute_ops:
            v.find("pytorch_compute", case, "small PyTorch ops in the wrapper (allowed, listed for review)",
                   {"ops": ev.compute_ops}, severity="warn")
        return comp

    def composition(self, ev: CallEvidence) -> dict[str, Any]:
        """{"triton": {...}, "library": {kind: count}, "library_ops", "triton_gpu_share", "line"} of one call."""
        kinds: Counter[str] = Counter()
        backends: dict[str, str] = {}
        for op, n in ev.compute_ops.items():
            kind, backend = _kind(op)
            if op in HEAVY_OPS or kind in ("matmul", "convolution", "attention"):
                kinds[kind] += n
                backends[kind] = backend
        share = None
        if ev.triton_gpu_ms is not None and ev.call_gpu_ms:
            share = round(min(1.0, ev.triton_gpu_ms / ev.call_gpu_ms), 3)
        comp: dict[str, Any] = {
            "triton": {"kernels": sorted(set(ev.kernels)), "launches": ev.launches, "arg_bytes": ev.triton_arg_bytes},
            "library": dict(kinds), "library_ops": {op: n for op, n in ev.compute_ops.items()},
            "triton_gpu_share": share, "triton_gpu_ms": ev.triton_gpu_ms, "call_gpu_ms": ev.call_gpu_ms,
        }
        comp["line"] = self._line(comp, backends)
        self.kernels.update(comp["triton"]["kernels"])
        if self.first is None:
            self.first = comp
        return comp

    def _line(self, comp: dict[str, Any], backends: dict[str, str]) -> str:
        t = comp["triton"]
        n_k = len(t["kernels"])
        parts = [f"Triton: {n_k} kernel{'s' * (n_k != 1)} ({t['launches']} launch{'es' * (t['launches'] != 1)})"]
        if comp["triton_gpu_share"] is not None:
            parts[0] += f", {comp['triton_gpu_share']:.0%} of the call's GPU time"
        elif self.device != "cuda":
            parts[0] += ", GPU-time share not measured (interpreter)"
        lib = comp["library"]
        if lib:
            items = []
            for kind, n in sorted(lib.items()):
                plural = "" if n == 1 else ("es" if kind.endswith("h") else "s")
                items.append(f"{n} {kind}{plural}" + (f" ({backends.get(kind, 'PyTorch')})" if self.device == "cuda"
                                                      else ""))
            names = ", ".join(f"{op} x{n}" for op, n in sorted(comp["library_ops"].items()) if op in HEAVY_OPS)
            parts.append("library: " + ", ".join(items) + ("" if self.device == "cuda" else f" [{names}]"))
        small = sorted(op for op in comp["library_ops"] if op not in HEAVY_OPS)
        if small:
            parts.append("PyTorch ops: " + ", ".join(small))
        return "; ".join(parts)

    def summary(self) -> dict[str, Any] | None:
        """The candidate's composition (its first case's, with every kernel seen) for the report."""
        if self.first is None:
            return None
        return {**self.first, "all_kernels": sorted(self.kernels), "all_triton_required": self.all_triton}
