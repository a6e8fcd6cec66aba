"""The probes that change the values the entry sees: its sentinels, magnitudes, bfloat16, its own defaults, the
harness's reference, and IEEE dots for an fp32 difference."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from typing import Any

import torch

from . import probe_inputs as pi
from .entry import _forget_compiled
from .outcome import Outcome, Probe, _finite_inputs, _mismatch, _mismatch_each, _nonfinite, missing_op, refused


class ValueProbes:
    """Uses the Prober's state (self.fn, self.ref, self.shape, self.dtype, self.only, self.emit, ...) and its core
    methods (call, judge, fail, wanted): a mixin of probes.Prober, never used alone."""

    def _sentinel(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        try:
            params = inspect.signature(self.entry).parameters
        except (TypeError, ValueError):
            params = {}
        for name in pi.SENTINEL_PARAMS:
            par = params.get(name)
            if par is None or not isinstance(par.default, int) or isinstance(par.default, bool):
                continue
            variant = pi.with_sentinel(x, par.default)
            label = f"{name}={par.default} in every 4th integer input entry"
            if variant is None or not self.wanted("sentinel", label):
                continue
            got = self.call(variant)
            # The reference refusing the sentinel too (F.embedding: padding_idx=-1 means none, and -1 is no index)
            # means the value is outside what the function takes, not a fault of the kernel.
            if (got.error is not None or got.oob) and self.invalid_for_reference(p, label, variant):
                continue
            if self.judge(p, label, variant, got) and self.reference is not None:
                # On a GPU a read before the buffer often lands in the allocator's other blocks: no error, a wrong
                # value. The reference (which honours the sentinel) shows it on every device.
                ref = self.call(variant, fn=self.reference)
                tols = [(10 * r, 10 * a) for r, a in self.output_tolerances(len(got.outputs or []))]
                diff = _mismatch_each(got.outputs or [], ref.outputs, tols) if ref.outputs else ""
                if diff:
                    self.fail(p, label, "differs from the reference on the sentinel", detail=diff,
                              judged_by="reference")

    def _magnitude(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        """Extreme values are robustness, as in run_validation (cases.py kind "extreme"): every failure here is
        recorded aside (kind "extreme"), a P0/P1 only where the contract requires it; an out-of-bounds access stays."""
        mark = len(p.failures)
        try:
            self._magnitude_variants(p, x)
        finally:
            self.set_aside(p, mark, "extreme")

    def _magnitude_variants(self, p: Probe, x: list[Any]) -> None:
        for label, variant in pi.magnitudes(x).items():
            if not self.wanted("magnitude", label) or self.out_of_time(p):
                continue
            got = self.call(variant)
            p.ran.append(label)
            if got.error is not None:
                self.fail(p, label, "illegal memory access" if got.oob else "crash", got.error)
                continue
            bad = _nonfinite(got.outputs or [])
            if not bad:
                continue
            if self.reference is not None:
                ref = self.call(variant, fn=self.reference)
                if ref.outputs is not None and not _nonfinite(ref.outputs):
                    self.fail(p, label, "non-finite output where the reference is finite", detail=bad,
                              judged_by="reference")
                else:
                    p.notes.append(f"{label}: non-finite, and so is the reference")
            else:
                self.fail(p, label, "non-finite output", detail=bad, judged_by="finite inputs")

    def _dtype(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        label = "bfloat16 inputs"
        if self.device == "cpu":  # measured: Triton 3.9's interpreter stores garbage for bf16_load * 0.5
            p.not_run = ("the CPU interpreter's bfloat16 arithmetic is not faithful (a bfloat16 load times a Python "
                         "float stores garbage on Triton 3.9): this probe runs on a GPU")
            return
        if self.dtype != torch.float32 or not self.wanted("dtype", label):
            p.not_run = "" if self.dtype == torch.float32 else "the example is not float32"
            return
        v = self.inputs(dtype=torch.bfloat16)
        if not any(isinstance(t, torch.Tensor) and t.dtype == torch.bfloat16 for t in v):
            p.not_run = "make_inputs gave no bfloat16 tensor for case.dtype=bfloat16"
            return
        got = self.call(v)
        p.ran.append(label)
        if got.error is not None:
            p.notes.append(f"{label}: the entry does not take bfloat16 ({type(got.error).__name__}: "
                           f"{str(got.error)[:120]})")
            return
        ref32 = self.call([t.float() if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in v])
        if ref32.outputs is None:
            return
        scale = max([1.0] + [t.abs().max().item() for t in ref32.outputs if t.is_floating_point() and t.numel()
                             and torch.isfinite(t).all()])
        floats = [i for i, t in enumerate(ref32.outputs) if t.is_floating_point()]  # codes, indices may move by one
        diff = _mismatch([(got.outputs or [])[i] for i in floats if i < len(got.outputs or [])],
                         [ref32.outputs[i] for i in floats], 5e-2, 5e-2 * scale)
        if diff:
            self.fail(p, label, "bfloat16 result far from the float32 result on the same values", detail=diff)

    def _defaults(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        try:
            params = list(inspect.signature(self.entry).parameters.values())
        except (TypeError, ValueError):
            p.not_run = "the entry has no readable signature"
            return
        pos = [q for q in params if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
        required = sum(q.default is q.empty for q in pos)
        if not any(q.default is not q.empty for q in pos[required:len(x)]):
            # (*args) of an autograd Function's apply has no default to leave out: calling it with fewer arguments
            # tests nothing the entry documents (mamba's SwiGLU.apply, issue 26's fourth held-out batch)
            p.not_run = ("the example call already leaves every default to the entry" if pos else
                         "the entry takes *args: it documents no defaults to call it with")
            return
        dropped = ", ".join(q.name for q in pos[required:len(x)])
        label = f"without {dropped}"
        if not self.wanted("defaults", label):
            return
        got = self.call(x[:required])
        p.ran.append(label)
        mark = len(p.failures)
        self._defaults_judge(p, label, x, got)
        # robustness unless the file's own callers leave those arguments out (audit/contract.py: "defaults")
        self.set_aside(p, mark, "defaults", dropped=[q.name for q in pos[required:len(x)]])

    def _defaults_judge(self, p: Probe, label: str, x: list[Any], got: Outcome) -> None:
        if got.error is not None and missing_op(got.error):
            p.notes.append(f"{label}: the default path calls a compiled operator this environment does not load "
                           f"({str(got.error)[:160]}): not the file's kernels, not judged")
            return
        if got.error is not None and not refused(got.error):
            self.fail(p, label, "crash on the entry's own defaults", got.error)
        elif got.error is None and _finite_inputs(x) and _nonfinite(got.outputs or []):
            self.fail(p, label, "non-finite output on the entry's own defaults", detail=_nonfinite(got.outputs or []))

    def _reference(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        if self.reference is None or self.task:
            p.not_run = ("run_validation compares against the task reference (its tolerances, dtypes and cases): run "
                         "it" if self.task else "the harness has no reference()")
            return
        label = "example vs reference"
        if not self.wanted("reference", label):
            return
        ref = self.call([t.to(torch.float64) if isinstance(t, torch.Tensor) and t.is_floating_point() else t
                         for t in x], fn=self.reference)
        p.ran.append(label)
        if ref.outputs is None:
            p.notes.append(f"the reference failed: {type(ref.error).__name__}: {str(ref.error)[:160]}")
            return
        tols = self.output_tolerances(len(outs))
        diff = _mismatch_each(outs, ref.outputs, tols)
        if diff and self.dtype == torch.float32 and not self.fp8_out:
            again = self._ieee_dots(lambda: self.call(x))
            if again is not None and again.outputs is not None and \
                    not _mismatch_each(again.outputs, ref.outputs, tols):
                p.aside.append({"kind": "precision", "variant": label, "what": "differs from the reference", "detail":
                                f"{diff}; with the fp32 tl.dot in IEEE (TRITON_F32_DEFAULT=ieee) the outputs agree: "
                                "the difference is TF32's, Triton's default precision for fp32 dots"})
                return
        if diff:
            fp8 = self.device != "cuda" and self.fp8_out
            self.fail(p, label, "differs from the reference", detail=diff, judged_by="reference",
                      **({"interpreter_fp8": True} if fp8 else {}))

    def _ieee_dots(self, run: Callable[[], Outcome]) -> Outcome | None:
        """run() again with every fp32 tl.dot in IEEE precision (Triton's TRITON_F32_DEFAULT, read where tl.dot
        resolves its default; on a GPU the entry module's kernels are compiled again for it); None when this Triton
        has no such switch."""
        try:
            from triton import knobs
        except ImportError:
            return None
        old = os.environ.get("TRITON_F32_DEFAULT")
        os.environ["TRITON_F32_DEFAULT"] = "ieee"
        try:
            if getattr(getattr(knobs, "language", None), "fp32_default", None) != "ieee":
                return None
            if self.device == "cuda" and not _forget_compiled(self.entry):
                return None
            return run()
        finally:
            if old is None:
                os.environ.pop("TRITON_F32_DEFAULT", None)
            else:
                os.environ["TRITON_F32_DEFAULT"] = old
            if self.device == "cuda":
                _forget_compiled(self.entry)
