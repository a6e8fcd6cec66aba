"""audit_kernel's dynamic confirmation (worker op "probe"): run the file's public entry on inputs that expose bugs.

Given the audited file, an entry and one example call (a harness in the task format: `make_inputs(case)`, optional
`AUDIT_SHAPE` or `SHAPES`, `ENTRY`, `reference`, and `SKIP_PROBES = {probe: why}` for what the entry's contract rules
out, e.g. rows of a blockwise quantizer that share a block), every probe runs the entry on the GPU, or under the interpreter with its bounds
check (bounds.py), on variants from probe_inputs.py, and compares it with itself (metamorphic) or with the harness's
reference. Nothing here decides severity: the server's audit/evidence.py does, from what each probe saw.

A KernelBench-form task reference (Model, get_inputs, get_init_inputs; no make_inputs) is an example call too:
probe_kb.py runs ModelNew on get_inputs() with Model as the reference, and the sizes move through the problem's
module-level constants.

A failure carries the probe, the variant's label and what went wrong; `python -m pytorch_to_triton.worker.probes
TARGET --harness H --only "PROBE: LABEL"` reruns that one variant and exits 1 while it still fails (the reproducer).
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from . import interp_compat, sanitizer, target_compile
from . import probe_inputs as pi
from .bounds import BOUNDS, OutOfBounds
from .bounds import install as install_bounds
from .compare import merged_tolerances, tolerance_for
from .errors_fmt import describe
from .poison import POISON
from .poison import install as install_poison
from .tasks import (
    Case,
    TaskError,
    dtype_from_name,
    is_kernelbench,
    load_module,
    resolve_candidate_entry,
    resolve_reference_entry,
)

# (probe, what it covers); the report lists every one, run or not, with its reason.
PROBES = {
    "example": "the example call: no crash, no out-of-bounds access, finite outputs from finite inputs",
    "repeat": "two runs of the example agree (races, uninitialised reads)",
    "layout": "non-contiguous copies of the same values give the same result (transposed, strided)",
    "rows": "a row's result does not depend on the batch size or its neighbours (prefixes of the batch)",
    "sizes": "sizes around block boundaries, empty, 1 and odd: no crash, no out-of-bounds access, finite outputs",
    "sentinel": "the entry's own sentinel (ignore_index...) in the integer inputs: no crash, no out-of-bounds access, "
                "the harness's reference's result",
    "magnitude": "large (x100) and shifted (-120) values: finite outputs (checked against the harness's reference "
                 "when it has one)",
    "dtype": "bfloat16 inputs stay close to the float32 result",
    "defaults": "the entry called with its own defaults (the arguments the example passes that have defaults left out)",
    "reference": "the example call against the harness's reference (run_validation does this for a task)",
    "grad": "the gradients of an entry with its own backward (an autograd Function) against the harness's reference's",
}
# Exceptions that mean the entry refused an input on purpose (a checked precondition), not a crash.
REFUSALS = (AssertionError, ValueError, NotImplementedError)


def refused(e: BaseException | None) -> bool:
    """The entry refused the input on purpose: a REFUSALS exception raised outside Triton's own code. One raised
    while Triton builds the kernel (`arange's range must be a power of 2` under the interpreter) is the kernel
    failing to compile, as a GPU reports it (a CompilationError): a crash, not a refusal (issue 26, held_out_14:
    lmcache's block-sparse attention at a head dim of 96)."""
    if not isinstance(e, REFUSALS):
        return False
    where = _raised_in(e)
    return not (where and _in_triton(where))


def missing_op(e: BaseException | None) -> bool:
    """A torch.ops lookup that failed: an operator of a compiled extension the worker never loaded (fbgemm's
    `torch.ops.fbgemm.jagged_softmax` without `import fbgemm_gpu`), a gap of this environment, not of the kernels."""
    if not isinstance(e, (AttributeError, RuntimeError)):
        return False
    return _raised_in(e).replace("\\", "/").endswith("torch/_ops.py")


def _raised_in(e: BaseException) -> str:
    """The file of the innermost frame an exception was raised in ('' without a traceback)."""
    import traceback

    frames = traceback.extract_tb(e.__traceback__) if e.__traceback__ is not None else []
    return frames[-1].filename if frames else ""


def _in_triton(filename: str) -> bool:
    import triton

    root = Path(triton.__file__).resolve().parent
    try:
        Path(filename).resolve().relative_to(root)
        return True
    except ValueError:
        return False


class Poisoned(Exception):
    """An earlier call left the CUDA context unusable (an illegal memory access): no later call can run."""
DEFAULT_BUDGET_S = 240.0


@dataclass
class Outcome:
    """One call: outputs (float64 copies on the CPU) or the error."""

    outputs: list[torch.Tensor] | None = None
    error: BaseException | None = None
    seconds: float = 0.0
    dtypes: list[torch.dtype] | None = None  # the outputs' own dtypes, before the float64 copies

    @property
    def oob(self) -> bool:
        """The call touched memory outside its tensors."""
        e: BaseException | None = self.error
        seen: set[int] = set()
        while e is not None and id(e) not in seen:  # a chain can loop back on itself
            if isinstance(e, OutOfBounds) or "out-of-bounds" in str(e):
                return True
            seen.add(id(e))
            e = e.__cause__ or e.__context__
        return False


@dataclass
class Probe:
    """What one probe did: the variants it ran, those that failed, or why it could not run."""

    name: str
    covered: str
    ran: list[str] = field(default_factory=list)
    failures: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    not_run: str = ""
    # Failures on inputs outside the default contract, each with its robustness `kind` (tier_rules.py): "structure"
    # (only at an odd size where the example's is even, the even size next to it passing: GEGLU's halves,
    # rotate-half RoPE), "1d" (only with a strided 1-D tensor), "weight" (only through a tensor that does not carry
    # the batch), "lastdim" (only with a strided last dim), "precision" (TF32 dots), "empty" (a batch of 0),
    # "extreme" (the magnitude probe's values), "defaults" (the entry called without its optional arguments). The
    # server (audit/evidence.py) tiers them against the contract: robustness findings, or P0s where the contract
    # says the callers give such inputs.
    aside: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON form for the protocol."""
        return {"name": self.name, "covered": self.covered, "ran": self.ran, "failures": self.failures,
                "notes": self.notes, "not_run": self.not_run, "aside": self.aside}


def _cuda_usable() -> bool:
    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").add_(1).item()
        return True
    except Exception:  # noqa: BLE001 - a sticky CUDA error
        return False


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _finite_inputs(inputs: list[Any]) -> bool:
    # float8 has no isfinite on the CPU (modelopt's fp8 dequantizer stopped every probe): compare in float32
    return all(torch.isfinite(t.float() if t.element_size() == 1 else t).all() for t in _tensors(inputs)
               if t.is_floating_point() and t.numel())


def _nonfinite(outs: list[torch.Tensor]) -> str:
    for i, t in enumerate(outs):
        if t.is_floating_point() and t.numel() and not torch.isfinite(t).all():
            bad = (~torch.isfinite(t)).sum().item()
            return f"output {i} has {bad} of {t.numel()} non-finite value(s) (NaN or inf) from finite inputs"
    return ""


def _mismatch(a: list[torch.Tensor], b: list[torch.Tensor], rtol: float, atol: float) -> str:
    if len(a) != len(b):
        return f"{len(a)} outputs vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x.shape != y.shape:
            return f"output {i}: shape {tuple(x.shape)} vs {tuple(y.shape)}"
        if not x.numel():
            continue
        if not x.is_floating_point():
            if not torch.equal(x, y):
                return f"output {i}: {(x != y).sum().item()} of {x.numel()} integer value(s) differ"
            continue
        close = torch.isclose(x, y, rtol=rtol, atol=atol, equal_nan=True)
        if not close.all():
            err = (x - y).abs().nan_to_num(nan=float("inf")).max().item()
            return (f"output {i}: {(~close).sum().item()} of {x.numel()} value(s) differ (max abs diff {err:.3g}, "
                    f"rtol {rtol:g}, atol {atol:g})")
    return ""


def _mismatch_each(a: list[torch.Tensor], b: list[torch.Tensor], tols: list[tuple[float, float]]) -> str:
    """_mismatch with a tolerance per output."""
    if len(a) != len(b):
        return f"{len(a)} outputs vs {len(b)}"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        rtol, atol = tols[i] if i < len(tols) else tols[-1]
        diff = _mismatch([x], [y], rtol, atol)
        if diff:
            return diff.replace("output 0", f"output {i}", 1)
    return ""


class Prober:
    """Runs the probes for one entry and one example call."""

    def __init__(self, entry: Callable[..., Any], make_inputs: Callable[[Case], Any], shape: Any, dtype: str,
                 device: str, reference: Callable[..., Any] | None = None, only: str | list[str] | None = None,
                 budget_s: float = DEFAULT_BUDGET_S, user_dirs: list[Path] | None = None,
                 skip: dict[str, str] | None = None, emit: Callable[..., Any] | None = None) -> None:
        self.entry, self.make, self.shape, self.device = entry, make_inputs, shape, device
        self.dtype = dtype_from_name(dtype)
        self.reference = reference
        # reproducer mode: the variants to run ("PROBE: LABEL"); the sanitizer's child asks for several at once
        self.only: list[str] | None = [only] if isinstance(only, str) else (list(only) if only else None)
        self.mark: Callable[[str], None] | None = None  # said before each asked-for variant runs (sanitizer.py)
        self.deadline = time.monotonic() + budget_s
        self.user_dirs = user_dirs or []
        self.rtol, self.atol = tolerance_for(self.dtype, None)
        self.emit = emit
        self.poisoned = ""  # set when a call leaves the CUDA context unusable (worker/__main__ replaces the worker)
        self.skip = dict(skip or {})
        self.task = False  # the harness is a task reference: run_validation owns the comparison with it
        self.fp8_out = False  # the entry returned a float8 tensor (set by call)
        self.batch_constexprs: dict[str, dict[str, set[Any]]] | None = None  # set after the rows probe
        # Issue 35 item 4: per kernel the rows probe launched, how many specialisation keys its other batch sizes
        # added to the example's (launch_specs.py: the key Triton compiles on): 0 = no recompile with the batch
        self.batch_new_keys: dict[str, int] | None = None
        self._ref_full: Outcome | None = None  # the reference on the example's whole batch (rows probe)
        self._ref_example_nonfinite: bool | None = None  # the reference's own NaN/inf on the example call
        self.out_dtypes: list[torch.dtype] = []  # the example's output dtypes (an fp16 output of an fp32 case)
        self.lines: Any = None  # probe_lines.LineCoverage of the audited file, set by run_probes
        self.tolerances: dict[str, Any] = {}  # the harness's SKIP_PROBES: probe -> why the entry's contract rules it out
        self.kb: Any = None  # probe_kb.KernelBenchHarness: sizes are a KernelBench problem's constants
        self.not_for: dict[str, str] = {}  # probe -> why it means nothing for this kind of task (said as is)

    # ---- calls ---------------------------------------------------------------------------------------------
    def inputs(self, shape: Any = None, dtype: torch.dtype | None = None, seed: int = 0) -> list[Any]:
        """make_inputs for a case (the example's shape and dtype unless given)."""
        case = Case("audit", self.shape if shape is None else shape, dtype or self.dtype, self.device, seed)
        out = self.make(case)
        return list(out) if isinstance(out, (tuple, list)) else [out]

    def call(self, inputs: list[Any], fn: Callable[..., Any] | None = None, kwargs: dict[str, Any] | None = None) \
            -> Outcome:
        """Run the entry (poisoned allocations, bounds-checked under the interpreter); outputs as float64 copies."""
        if self.poisoned:
            raise Poisoned(self.poisoned)
        t0 = time.monotonic()
        BOUNDS.active, POISON.active = True, True
        try:
            args = pi.fresh_copies(inputs)  # in-place entries: every call on the caller's own values
            ret = (fn or self.entry)(*args, **(kwargs or {}))
            outs = _tensors(ret) or [a for a in args if isinstance(a, torch.Tensor)]  # in-place entries
            if fn is None and any("float8" in str(t.dtype) and str(t.dtype).removeprefix("torch.") not in
                                  interp_compat.fp8_faithful() for t in outs):
                # the interpreter's float32 -> float8 casts round differently from the GPU's, except the formats
                # interp_compat.py converts as the GPU does (float8e4nv)
                self.fp8_out = True
            if self.device == "cuda":
                torch.cuda.synchronize()
            res = [t.detach().to("cpu").to(torch.float64) if t.is_floating_point() else t.detach().to("cpu")
                   for t in outs]
            return Outcome(outputs=res, seconds=time.monotonic() - t0, dtypes=[t.dtype for t in outs])
        except Exception as e:  # noqa: BLE001 - a failing call is what a probe looks for
            if self.device == "cuda" and not _cuda_usable():
                self.poisoned = f"{type(e).__name__}: {str(e)[:160]}"
            return Outcome(error=e, seconds=time.monotonic() - t0)
        finally:
            BOUNDS.active, POISON.active = False, False

    def wanted(self, probe: str, label: str) -> bool:
        """Reproducer mode runs the variants asked for only (each announced to `mark` before it runs)."""
        if self.only is None:
            return True
        hit = f"{probe}: {label}" in self.only
        if hit and self.mark is not None:
            self.mark(f"{probe}: {label}")
        return hit

    @staticmethod
    def set_aside(p: Probe, since: int, kind: str, **extra: Any) -> None:
        """Move the failures recorded since index `since` to p.aside as robustness `kind` (tier_rules.py); an
        out-of-bounds access stays a failure (memory safety is the contract on every input)."""
        moved = [r for r in p.failures[since:] if not r.get("oob")]
        p.failures[since:] = [r for r in p.failures[since:] if r.get("oob")]
        p.aside += [{**r, "kind": kind, **extra, "detail": r.get("detail") or r.get("error") or r["what"]}
                    for r in moved]

    def fail(self, p: Probe, label: str, what: str, error: BaseException | None = None, **extra: Any) -> None:
        """Record a failing variant (with the kernel line when the error came from inside a kernel)."""
        rec: dict[str, Any] = {"variant": label, "what": what, **extra}
        if error is not None:
            info = describe(error, "run", self.user_dirs)
            rec["error"] = f"{info.get('type')}: {info.get('message', '')}"[:600]
            for k in ("kernel_line", "kernel_function", "kernel_source_line", "line", "file"):
                if info.get(k) is not None:
                    rec[k] = info[k]
            rec["oob"] = Outcome(error=error).oob
        p.failures.append(rec)

    def judge(self, p: Probe, label: str, inputs: list[Any], got: Outcome, refusal_ok: bool = False) -> bool:
        """The safety rules every variant obeys; True when the call produced outputs worth comparing."""
        p.ran.append(label)
        if got.error is not None and missing_op(got.error):
            p.notes.append(f"{label}: not judged: it calls a compiled operator this environment does not load "
                           f"({str(got.error)[:160]}), not the file's kernels")
            return False
        if got.error is not None:
            if refusal_ok and refused(got.error) and not got.oob:
                p.notes.append(f"{label}: refused ({type(got.error).__name__}: {str(got.error)[:120]})")
                return False
            self.fail(p, label, "illegal memory access" if got.oob else "crash", got.error)
            return False
        bad = _nonfinite(got.outputs or []) if _finite_inputs(inputs) else ""
        if bad and self._reference_nonfinite_too(inputs, got):
            p.notes.append(f"{label}: non-finite where the harness's reference is too ({bad[:80]}): its meaning")
            return True
        if bad:
            self.fail(p, label, "non-finite output", detail=bad)
            return False
        return True

    def _reference_nonfinite_too(self, inputs: list[Any], got: Outcome) -> bool:
        """The harness's reference gives NaN/inf at exactly the same places (min-p's -inf for filtered logits)."""
        if self.reference is None:
            return False
        ref = self.call(inputs, fn=self.reference)
        mine, theirs = got.outputs or [], ref.outputs or []
        if ref.error is not None or len(mine) != len(theirs):
            return False
        for a, b in zip(mine, theirs, strict=True):
            if not a.is_floating_point():
                continue
            if a.shape != b.shape or not b.is_floating_point():
                return False
            if not (torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(torch.isposinf(a), torch.isposinf(b))
                    and torch.equal(torch.isneginf(a), torch.isneginf(b))):
                return False
        return True

    def out_of_time(self, p: Probe) -> bool:
        """Stop a probe when the budget is spent (the report says so)."""
        if time.monotonic() > self.deadline:
            p.notes.append("time budget spent: the remaining variants did not run")
            return True
        return False

    # ---- the probes ----------------------------------------------------------------------------------------
    def run(self) -> list[Probe]:
        """Every probe; the example call must work before the others mean anything."""
        from .kernelbench import CandidateInitError

        probes = {name: Probe(name, covered) for name, covered in PROBES.items()}
        try:
            x = self.inputs()
        except CandidateInitError as e:  # ModelNew(*get_init_inputs()) raised: the candidate's failure
            x, base = [], Outcome(error=e.exc)
        except Exception as e:  # noqa: BLE001
            raise TaskError("inputs", f"the harness's make_inputs failed for shape {self.shape}: "
                            f"{type(e).__name__}: {e}", usage=True) from e
        else:
            if self.mark is not None:
                self.mark("example: example")
            with self.lines.watch() if self.lines is not None else contextlib.nullcontext():
                base = self.call(x)  # the example's host lines (probe_lines.py): one traced call, not every probe's
        self.out_dtypes = base.dtypes or []
        if self.kb is not None:
            probes["example"].notes += [*self.kb.notes, f"parameters: {self.kb.parameters()}"]
        ok = self.judge(probes["example"], "example", x, base)
        if not ok:
            for p in probes.values():
                if p.name != "example":
                    p.not_run = "the example call itself failed (see the example probe)"
            return list(probes.values())
        outs = base.outputs or []
        steps = [self._repeat, self._layout, self._rows, self._sizes, self._sentinel, self._magnitude, self._dtype,
                 self._defaults, self._reference, self._grad]
        for i, step in enumerate(steps):
            name = step.__name__.lstrip("_")
            p = probes[name]
            if self.emit is not None:
                self.emit("progress", message=f"probe {name}", progress=i + 1, total=len(steps))
            if name in self.not_for:
                p.not_run = self.not_for[name]
                continue
            if name in self.skip:
                p.not_run = f"the harness rules it out: {self.skip[name]}"
                continue
            if self.only is not None and not any(o.startswith(f"{name}:") for o in self.only):
                p.not_run = "not asked for (reproducer of one variant)"
                continue
            if time.monotonic() > self.deadline:
                p.not_run = "time budget spent before this probe"
                continue
            if self.poisoned:
                p.not_run = f"the CUDA context is unusable after an earlier failure ({self.poisoned})"
                continue
            from .runtime import RECORDER

            keys_before, names_before = set(RECORDER.specs), len(RECORDER.names)
            try:
                step(p, x, outs)
                if name == "rows" and RECORDER.record_specs:
                    launched = set(RECORDER.names[names_before:])
                    self.batch_new_keys = {k: 0 for k in launched}
                    for key, spec in RECORDER.specs.items():
                        if key not in keys_before and spec.kernel in launched:
                            self.batch_new_keys[spec.kernel] += 1
                if name == "rows":  # what the constexprs took while only the batch changed (audit/evidence.py)
                    self.batch_constexprs = {k: {q: set(vs) for q, vs in ps.items()}
                                             for k, ps in RECORDER.constexprs.items()}
            except Poisoned as e:
                p.not_run = f"stopped: the CUDA context is unusable after an earlier failure ({e})"
            except Exception as e:  # noqa: BLE001 - a probe that breaks says so; the others still run
                p.not_run = f"probe error: {type(e).__name__}: {e}"[:300]
            if self.kb is not None and not self.poisoned:
                try:
                    self.kb.reset()  # the sizes probe built the models at other sizes: the example's again
                except Exception as e:  # noqa: BLE001 - said, and the later probes do not run on other models
                    why = f"the models could not be built at the example's sizes again ({type(e).__name__}: {e})"
                    self.not_for.update(dict.fromkeys(PROBES, why[:300]))
            if not p.ran and not p.not_run:
                p.not_run = "nothing to vary for this entry"
        return list(probes.values())

    def _repeat(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        if not self.wanted("repeat", "second run"):
            return
        again = self.call(x)
        if self.judge(p, "second run", x, again):
            diff = _mismatch(again.outputs or [], outs, self.rtol, self.atol)
            if diff:
                self.fail(p, "second run", "runs disagree", detail=diff)

    def _layout(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        """Each layout variant as a whole, then, when it fails or is refused, one tensor at a time: which argument
        the failure comes from decides what it means (a refusal of one must not hide the others). A failure only
        through tensors that do not carry the batch (a weight, a packed buffer, a fresh output its callers allocate
        dense) is a verify note, not a P0."""
        b = pi.batch_size(x)
        variants = pi.layouts(x)
        for label, variant in variants.items():
            singles = {f"{label}, input {i} only": (i, v) for i, v in pi.one_at_a_time(x, variant).items()}
            if self.only is not None and not self.wanted("layout", label):
                for name, (_i, v) in singles.items():  # a reproducer of one argument's variant
                    if self.wanted("layout", name):
                        self._layout_try(p, name, v, x, outs, {_i})
                continue
            if self.out_of_time(p):
                continue
            whole = self._layout_try(p, label, variant, x, outs, {i for _n, (i, _v) in singles.items()})
            if label == pi.STRIDED_1D:
                if isinstance(whole, dict):  # a strided weight or bias: aside, not a P0
                    p.failures.remove(whole)
                    p.aside.append({"kind": "1d", "variant": label, "what": whole["what"],
                                    "detail": "only the 1-D tensors (weights, biases) are strided in this variant; "
                                              "the callers of such entries usually pass parameters, which are dense"})
                continue
            if whole == "ok" or self.only is not None:
                continue
            if len(singles) < 2:
                if isinstance(whole, dict) and singles:
                    self._weight_aside(p, whole, next(iter(singles.values()))[0], x, b)
                continue
            if isinstance(whole, dict):
                p.failures.remove(whole)
            found = []
            for name, (i, v) in singles.items():
                if self.out_of_time(p):
                    break
                got = self._layout_try(p, name, v, x, outs, {i})
                if isinstance(got, dict):
                    found.append((i, got))
            if isinstance(whole, dict) and (not found or (whole.get("oob") and not any(r.get("oob") for _i, r in found))):
                p.failures.append(whole)  # only the combination fails (or reads out of bounds): the whole is the evidence
            for i, rec in found:
                self._weight_aside(p, rec, i, x, b)
        # Rows of a wider buffer passed for these inputs: they were among the tensors that variant changed (it
        # changes floating tensors only) and no failure of it, P0 or weight note, came through them.
        row_changed = set(pi.one_at_a_time(x, variants[pi.ROW_STRIDED])) if pi.ROW_STRIDED in p.ran else set()
        row_failed = {i for f in p.failures + p.aside if pi.base_variant(f["variant"]) == pi.ROW_STRIDED
                      for i in f.get("inputs", ())}
        last = [f for f in p.failures if pi.base_variant(f["variant"]) in pi.LASTDIM and f.get("inputs")
                and set(f["inputs"]) <= row_changed - row_failed]
        if last:  # right for any row stride, wrong only when the last dim is strided: an assumption
            for f in last:  # (an out-of-bounds read too: the kernel reads a strided last dim as a dense one)
                p.failures.remove(f)
            p.aside.append({"kind": "lastdim", "variant": last[0]["variant"], "what": last[0]["what"],
                            "detail": f"{pi.ROW_STRIDED} (the last dim unit-stride) passes: the kernel honours the "
                                      "row strides and assumes a unit stride in the last dimension" +
                                      ("; with a strided last dim it reads or writes out of bounds" if
                                       any(f.get("oob") for f in last) else "")})

    def _layout_try(self, p: Probe, label: str, variant: list[Any], x: list[Any], outs: list[torch.Tensor],
                    inputs: set[int]) -> dict[str, Any] | str:
        """One layout variant (`inputs`: the tensors it changed): its failure record, 'refused' (a checked
        precondition) or 'ok'."""
        got = self.call(variant)
        mark = len(p.failures)
        if self.judge(p, label, x, got, refusal_ok=True):
            diff = _mismatch(got.outputs or [], outs, self.rtol, self.atol)
            if diff:
                self.fail(p, label, "wrong result on non-contiguous input", detail=diff)
        if len(p.failures) > mark:
            p.failures[-1]["inputs"] = sorted(inputs)
            return p.failures[-1]
        return "refused" if got.error is not None else "ok"

    @staticmethod
    def _weight_aside(p: Probe, rec: dict[str, Any], i: int, x: list[Any], b: int | None) -> None:
        """A failure through input i alone, which does not carry the batch (its first dimension is not the batch's):
        a weight or buffer its callers pass dense; a verify note (P2), not a P0. Out-of-bounds accesses stay."""
        t = x[i]
        if rec.get("oob") or b is None or not isinstance(t, torch.Tensor) or (t.dim() >= 1 and t.shape[0] == b):
            return
        p.failures.remove(rec)
        p.aside.append({"kind": "weight", "variant": rec["variant"], "what": rec["what"], "inputs": [i],
                        "detail": f"only input {i} (shape {tuple(t.shape)}, {str(t.dtype).removeprefix('torch.')}), "
                                  f"which does not carry the batch ({b}), fails non-contiguous; the inputs that carry "
                                  "it pass"})

    def _rows(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        b = pi.batch_size(x)
        per_row = [i for i, t in enumerate(outs) if t.dim() >= 1 and t.shape[0] == b]
        if b is None or not per_row:
            p.not_run = "no batch dimension shared by the inputs and the outputs"
            return
        if self.kb is not None:
            key, why = self.kb.batch(b)
            if key is None:
                p.not_run = why
                return
            p.notes.append(f"the batch is {key}: the first k rows are the problem at {key}=k")
        indexing = pi.indexes_rows(x, b)
        if indexing is not None:
            p.not_run = (f"integer input {indexing} holds values up to the batch size {b} (offsets or indices into the "
                         "rows, a jagged batch): the first k rows are not a smaller problem unless it changes too")
            return
        for label, (k, variant) in pi.row_prefixes(x).items():
            if not self.wanted("rows", label) or self.out_of_time(p):
                continue
            got = self.call(variant)
            if got.error is not None and self.invalid_for_reference(p, label, variant):
                continue
            if self.judge(p, label, variant, got):
                sub = got.outputs or []
                mine = [sub[i] for i in per_row if i < len(sub)]
                diff = _mismatch(mine, [outs[i][:k] for i in per_row], self.rtol, self.atol)
                if diff and self._reference_couples_rows(x, variant, per_row, k):
                    p.notes.append(f"{label}: rows differ, and so do the reference's: its rows depend on their "
                                   "neighbours (a scale per block of rows), not a fault of the kernel")
                elif diff:
                    self.fail(p, label, "rows differ from the same rows of the full batch", detail=diff)

    def _reference_couples_rows(self, x: list[Any], variant: list[Any], per_row: list[int], k: int) -> bool:
        """The harness's reference gives other rows for a prefix of the batch than for the whole: the function
        itself couples rows (blockwise quantization), so the rows probe cannot judge the kernel."""
        if self.reference is None:
            return False
        if self._ref_full is None:  # the whole batch's reference, once for every prefix that differs
            self._ref_full = self.call(x, fn=self.reference)
        full, part = self._ref_full, self.call(variant, fn=self.reference)
        if full.outputs is None or part.outputs is None:
            return False
        a = [part.outputs[i] for i in per_row if i < len(part.outputs)]
        b = [full.outputs[i][:k] for i in per_row if i < len(full.outputs)]
        return bool(_mismatch(a, b, self.rtol, self.atol))

    def _sizes(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        from .kernelbench import CandidateInitError

        if self.kb is not None:
            variants, left = self.kb.boundary_sizes()
            p.notes += [f"left out: {w}" for w in left]
        else:
            variants = pi.boundary_shapes(self.shape)
        for label, shape in variants.items():
            if not self.wanted("sizes", label) or self.out_of_time(p):
                continue
            try:
                v = self.inputs(shape)
            except CandidateInitError as e:  # the reference's Model was built at these sizes; ModelNew was not
                p.ran.append(label)
                self.fail(p, label, "ModelNew(*get_init_inputs()) raised", e.exc)
                continue
            except Exception as e:  # noqa: BLE001 - the harness cannot build this size: not the kernel's fault
                p.notes.append(f"{label}: make_inputs refused ({type(e).__name__})")
                continue
            got = self.call(v)
            if (got.error is not None or _nonfinite(got.outputs or [])) and self.invalid_for_reference(p, label, v):
                continue
            if self._parity_only(p, label, shape, v, got):
                continue
            mark = len(p.failures)
            self.judge(p, label, v, got, refusal_ok=True)
            if len(p.failures) > mark and pi.has_empty(shape):  # a batch of 0: robustness unless the contract says
                rec = p.failures.pop()
                p.aside.append({**rec, "kind": "empty",
                                "detail": rec.get("detail") or rec.get("error") or "an empty dimension"})

    def _parity_only(self, p: Probe, label: str, shape: Any, inputs: list[Any], got: Outcome) -> bool:
        """A failure (not an out-of-bounds access) at an odd size of a dimension the example has even, when the even
        size next to it passes: recorded as a parity note (p.aside), not a failure of the kernel."""
        bad = got.error is not None or (_finite_inputs(inputs) and _nonfinite(got.outputs or []))
        if not bad or got.oob:
            return False
        moved = pi.moved_dim(self.shape, shape)
        if moved is None:
            return False
        key, old, new = moved
        if old % 2 or new % 2 == 0 or new < 1:
            return False
        # The even neighbour that still ends in a partial block (not a multiple of 16): 15 -> 14, 63 -> 62, 17 -> 18.
        even = next((t for t in (new + 1, new - 1) if t >= 2 and t % 16 and t != old), None)
        if even is None:
            return False
        twin = dict(shape) if isinstance(shape, dict) else list(shape)
        twin[key] = even
        twin = twin if isinstance(twin, dict) else tuple(twin)
        try:
            tv = self.inputs(twin)
        except Exception:  # noqa: BLE001 - no even twin to compare with: judge the odd one as it is
            return False
        tgot = self.call(tv)
        if tgot.error is not None or (_finite_inputs(tv) and _nonfinite(tgot.outputs or [])):
            return False
        what = f"{type(got.error).__name__}: {str(got.error)[:160]}" if got.error is not None else \
            "non-finite output"
        p.ran.append(label)
        p.aside.append({"kind": "structure", "variant": label, "what": what, "detail": f"the even size next to it passes "
                        f"(shape {twin})"})
        p.notes.append(f"{label}: fails ({what[:80]}) at an odd size where the example's is even; {twin} passes")
        return True

    def invalid_for_reference(self, p: Probe, label: str, inputs: list[Any]) -> bool:
        """True (and a note) when the harness's reference refuses the same input or gives non-finite values too: the
        input is outside what the function means (0 classes), not a failure of the kernel."""
        if self.reference is None:
            return False
        ref = self.call(inputs, fn=self.reference)
        if ref.error is not None:
            p.ran.append(label)
            p.notes.append(f"{label}: the reference refuses it too ({type(ref.error).__name__})")
            return True
        if _nonfinite(ref.outputs or []) and not self._reference_nonfinite_at_example():
            p.ran.append(label)
            p.notes.append(f"{label}: the reference is non-finite too")
            return True
        return False

    def _reference_nonfinite_at_example(self) -> bool:
        """The reference gives NaN/inf on the example call itself (lmcache's -inf lse for a query block with no key
        block): then NaN/inf from it says nothing about an input being degenerate, and cannot excuse a crash."""
        if self._ref_example_nonfinite is None:
            x = self.inputs()
            ref = self.call(x, fn=self.reference) if self.reference is not None else Outcome(outputs=[])
            self._ref_example_nonfinite = bool(ref.outputs is not None and _finite_inputs(x)
                                               and _nonfinite(ref.outputs))
        return self._ref_example_nonfinite

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

    def output_tolerances(self, n: int) -> list[tuple[float, float]]:
        """(rtol, atol) per output: the coarser of the case dtype's and the output's own dtype's (the harness's
        TOLERANCES first): an fp16 output of a float32 case is judged at fp16 precision (held_out_18: unsloth-zoo's
        grouped GEMM returns x's fp16 rounded to within half an ulp, and failed the fp32 tolerance)."""
        return [self.tolerance(self.out_dtypes[i] if i < len(self.out_dtypes) else self.dtype) for i in range(n)]

    def tolerance(self, dtype: torch.dtype) -> tuple[float, float]:
        """(rtol, atol) for a tensor of `dtype`: the coarser of the case dtype's and its own."""
        case = tolerance_for(self.dtype, self.tolerances)
        own = tolerance_for(dtype, self.tolerances) if dtype.is_floating_point else case
        return max(case[0], own[0]), max(case[1], own[1])

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

    def _grad(self, p: Probe, x: list[Any], outs: list[torch.Tensor]) -> None:
        """An entry whose outputs come from an autograd Function has a backward of its own, which no forward probe
        runs (a layernorm backward that ignores normalized_shape, issue 26): its gradients against the reference's,
        for the same output gradients: random ones, and those of `out.sum()` (autograd hands the backward an
        expanded, stride-0 tensor: fbgemm's jagged multiply read it as dense). Only a nonzero gradient that differs
        is a failure; a gradient the entry does not give (None) or gives as zeros is a note (an input it is not meant
        to train, a cos cache)."""
        if self.reference is None or self.task:
            p.not_run = ("run_validation compares against the task reference: its forward only" if self.task else
                         "the harness has no reference()")
            return
        floats = [i for i, t in enumerate(x) if isinstance(t, torch.Tensor) and t.is_floating_point()
                  and t.element_size() > 1 and t.numel()]
        if not floats:
            p.not_run = "no floating-point input to differentiate"
            return
        for label, expanded in (("gradients vs reference", False), ("gradients of out.sum() vs reference", True)):
            if not self.wanted("grad", label) or self.out_of_time(p):
                continue
            cand = self._grads(x, floats, None, expanded=expanded)
            if isinstance(cand, str):
                p.not_run = cand
                return
            p.ran.append(label)
            if isinstance(cand, BaseException):
                if refused(cand) and not Outcome(error=cand).oob:
                    p.notes.append(f"{label}: the backward refused ({type(cand).__name__}: {str(cand)[:120]})")
                else:
                    self.fail(p, label, "illegal memory access in the backward" if Outcome(error=cand).oob else
                              "crash in the backward", cand)
                continue
            wide = [t.to(torch.float64) if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in x]
            ref = self._grads(wide, floats, self.reference, outs_used=cand[1], expanded=expanded)
            if isinstance(ref, (str, BaseException)):
                p.notes.append(f"{label}: the reference gives no gradient to compare with ({str(ref)[:160]})")
                continue
            self._grad_compare(p, label, floats, cand[0], ref[0], [x[i].dtype for i in floats])

    def _grad_compare(self, p: Probe, label: str, floats: list[int], cand: list[Any], ref: list[Any],
                      dtypes: list[torch.dtype]) -> None:
        bad, notes = [], []
        for i, (g, r) in enumerate(zip(cand, ref, strict=True)):
            rtol, atol = self.tolerance(dtypes[i])  # a gradient has its input's dtype
            if g is None or r is None:
                if r is not None and g is None:
                    notes.append(f"input {floats[i]}: the entry gives no gradient, the reference does")
                continue
            if g.shape != r.shape:
                bad.append(f"input {floats[i]}: gradient shape {tuple(g.shape)} vs {tuple(r.shape)}")
                continue
            if not torch.count_nonzero(r):  # a step (round, argmax) in the reference: nothing to judge an STE by
                continue
            if not torch.count_nonzero(g):
                notes.append(f"input {floats[i]}: the entry's gradient is all zeros, the reference's is not (an input "
                             "it is not meant to train?)")
                continue
            scale = max(1.0, r.abs().max().item())
            diff = _mismatch([g], [r], 10 * rtol, 10 * atol * scale)
            if diff:
                bad.append(f"input {floats[i]}: {diff.removeprefix('output 0: ')}")
        p.notes += [f"{label}: {n}" for n in notes]
        if bad:
            self.fail(p, label, "gradient differs from the reference's", detail="; ".join(bad)[:500],
                      judged_by="reference")

    def _grads(self, x: list[Any], floats: list[int], fn: Callable[..., Any] | None,
               outs_used: list[int] | None = None, expanded: bool = False) -> Any:
        """(gradients of x[floats], the outputs differentiated) for fixed random output gradients (or, `expanded`,
        those of out.sum()); an exception of the call or its backward; or a string saying why there is nothing to
        differentiate."""
        leaves = {i: x[i].detach().clone().requires_grad_(True) for i in floats}
        args = [leaves.get(i, a.clone() if isinstance(a, torch.Tensor) else a) for i, a in enumerate(x)]
        cand = fn is None
        if cand:
            BOUNDS.active, POISON.active = True, True
        try:
            with torch.enable_grad():
                try:
                    res = _tensors((fn or self.entry)(*args))
                except Exception as e:  # noqa: BLE001 - the forward ran in the other probes: only its backward here
                    if Outcome(error=e).oob:
                        return e
                    return (f"the call with inputs that require grad raised {type(e).__name__}: {str(e)[:160]} (an "
                            "entry that writes its inputs in place, or one without a backward)")
                if outs_used is None:
                    outs_used = [k for k, t in enumerate(res) if t.requires_grad and _custom_backward(t.grad_fn)]
                    if not outs_used:
                        return "the entry's outputs do not come from an autograd Function (a forward-only entry)"
                used = [res[k] for k in outs_used if k < len(res) and res[k].requires_grad]
                if not used:
                    return "its outputs do not require grad"
                gen = torch.Generator().manual_seed(1234)
                gos = [torch.ones((), device=t.device, dtype=t.dtype).expand(t.shape) if expanded else
                       torch.randn(t.shape, generator=gen, dtype=torch.float64).to(t.device, t.dtype) for t in used]
                grads = torch.autograd.grad(used, [leaves[i] for i in floats], gos, allow_unused=True)
            if self.device == "cuda":
                torch.cuda.synchronize()
            return [None if g is None else g.detach().to("cpu", torch.float64) for g in grads], outs_used
        except Exception as e:  # noqa: BLE001 - a failing backward is what this probe looks for
            if cand and self.device == "cuda" and not _cuda_usable():
                self.poisoned = f"{type(e).__name__}: {str(e)[:160]}"
            return e
        finally:
            if cand:
                BOUNDS.active, POISON.active = False, False


def _entry_module(entry: Any) -> Any:
    """The module an entry was defined in (an autograd Function's `apply`: its class's)."""
    owner = getattr(entry, "__self__", None)
    name = owner.__module__ if isinstance(owner, type) else getattr(inspect.unwrap(entry), "__module__", None)
    return sys.modules.get(name or "")


def _forget_compiled(entry: Any) -> bool:
    """Drop the compiled kernels that the @triton.jit functions of the entry's module keep in memory (through an
    autotuner's or heuristics' .fn), so the next launch compiles again under the current settings; False when this
    Triton keeps them elsewhere (no `device_caches`)."""
    from .probe_lines import jit_chain

    mod = _entry_module(entry)
    found = False
    for obj in list(vars(mod).values()) if mod is not None else []:
        caches = next((c for o in jit_chain(obj) if isinstance(c := getattr(o, "device_caches", None), dict)), None)
        if caches is not None:
            caches.clear()
            found = True
    return found


def _entry_line(entry: Any, target: Path) -> int:
    """The def line of the entry in the audited file (an autograd Function's `apply`: its `forward`); 0 when the
    entry's code is not in that file (torch's own Function.apply lives in torch)."""
    owner = getattr(entry, "__self__", None)
    obj = owner.forward if isinstance(owner, type) and issubclass(owner, torch.autograd.Function) else entry
    try:
        obj = inspect.unwrap(obj)
        src = inspect.getsourcefile(obj)
        if src is None or Path(src).resolve() != target.resolve():
            return 0
        return inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return 0


def _custom_backward(node: Any, limit: int = 64) -> bool:
    """An autograd graph that reaches an autograd Function's backward (a kernel of the file's own) within `limit`
    nodes of the output: a view or cast after `Function.apply` still counts."""
    seen, todo = 0, [node]
    while todo and seen < limit:
        n = todo.pop()
        if n is None:
            continue
        seen += 1
        if isinstance(n, torch.autograd.function.BackwardCFunction):
            return True
        todo += [m for m, _ in getattr(n, "next_functions", ())]
    return False


# ---- loading -------------------------------------------------------------------------------------------------
def _entry(target: Path, harness: Path, h_mod: Any, entry: str | None) \
        -> tuple[Callable[..., Any], Any, Callable[..., Any] | None]:
    """(entry, harness module, reference or None) of a harness in the task format (make_inputs)."""
    if not callable(getattr(h_mod, "make_inputs", None)):
        raise TaskError("import", f"{harness.name} has no make_inputs(case) and is not in KernelBench form (Model, "
                        "get_inputs); an audit harness is the entry's example call in the task format "
                        "(references/audit-guide.md, 'Probes')", usage=True)
    t_mod = h_mod if target.resolve() == harness.resolve() else load_module(target, "target")
    name = entry or getattr(h_mod, "ENTRY", None)
    ref = getattr(h_mod, "reference", None) if h_mod is not t_mod else None
    if isinstance(name, str):
        fn = getattr(t_mod, name, None)
        if not callable(fn):
            raise TaskError("import", f"{target.name} has no function {name!r} (the audit entry)", usage=True)
        return fn, h_mod, ref if callable(ref) else None
    if callable(getattr(h_mod, "entry", None)):
        return h_mod.entry, h_mod, ref if callable(ref) else None
    ref_name = resolve_reference_entry(h_mod, None)  # a task reference as the harness: the candidate's entry
    return getattr(t_mod, resolve_candidate_entry(t_mod, None, ref_name)), h_mod, getattr(h_mod, ref_name)


def _example_shape(h_mod: Any, shape: Any) -> Any:
    if shape is not None:
        return tuple(shape) if isinstance(shape, list) else shape
    shapes = getattr(h_mod, "AUDIT_SHAPE", None) or getattr(h_mod, "SHAPES", None)
    if isinstance(shapes, dict) and shapes and not all(isinstance(v, int) for v in shapes.values()):
        return next(iter(shapes.values()))
    if shapes is None:
        raise TaskError("inputs", "no example shape: give the harness AUDIT_SHAPE = (...) or SHAPES, or the sidecar "
                        "[audit] shape = [...]", usage=True)
    return shapes


def _value_order(v: Any) -> tuple[str, Any]:
    return (type(v).__name__, v if isinstance(v, (int, float)) else str(v))


def run_probes(args: dict[str, Any], rt: Any, emit: Any = None, patches: Any = None) -> dict[str, Any]:
    """Worker op "probe": args target, harness, entry?, shape?, dtype?, only?, budget_s?."""
    install_poison()
    bounds = rt.interpreter and install_bounds()
    target, harness = Path(args["target"]), Path(args["harness"])
    h_mod = load_module(harness, "harness")
    kb = None
    if is_kernelbench(h_mod) and not callable(getattr(h_mod, "make_inputs", None)):
        from .probe_kb import NOT_FOR_KERNELBENCH, KernelBenchHarness

        kb = KernelBenchHarness(h_mod, harness, target, rt.device, args)
        fn, ref, make, shape, dtype = kb.entry, kb.reference, kb.make_inputs, kb.sizes, kb.dtype
    else:
        fn, h_mod, ref = _entry(target, harness, h_mod, args.get("entry"))
        make, shape, dtype = h_mod.make_inputs, _example_shape(h_mod, args.get("shape")), args.get("dtype") or "float32"
    prober = Prober(fn, make, shape, dtype, rt.device, ref,
                    args.get("only"), float(args.get("budget_s") or DEFAULT_BUDGET_S),
                    [target.resolve().parent, harness.resolve().parent], getattr(h_mod, "SKIP_PROBES", None), emit)
    if kb is not None:
        prober.kb, prober.not_for = kb, dict(NOT_FOR_KERNELBENCH)
    from .probe_lines import LineCoverage, kernel_names

    prober.lines = LineCoverage(target, kernel_names(_entry_module(fn)))
    if emit:
        emit("progress", message=f"probes of {getattr(fn, '__name__', 'entry')} at {shape}")
    from .runtime import RECORDER

    RECORDER.reset()
    RECORDER.record_blocks(True)
    RECORDER.record_launches(True)  # specialisation keys: the compile-count probe, the target compile
    compile_notes: list[str] = []
    compiler = target_compile.for_validation(args, rt, compile_notes)
    prober.task = kb is not None or not (args.get("entry") or hasattr(h_mod, "ENTRY")
                                         or callable(getattr(h_mod, "entry", None)))
    prober.tolerances = merged_tolerances(h_mod, None)
    if args.get("mark"):  # the sanitizer's child (a terminal, never the worker's protocol channel)
        prober.mark = lambda v: print(f"{sanitizer.MARK}{v}", flush=True)
    try:
        probes = prober.run()
    finally:
        RECORDER.record_blocks(False)
    specs = RECORDER.launch_specs()
    RECORDER.record_launches(False)
    on_target = target_compile.compile_now(compiler, specs, compile_notes) if compiler is not None else None
    sanitized = _sanitize(args, rt, [p.as_dict() for p in probes], prober)
    launched = sorted(set(RECORDER.names))
    def listed(table: dict[str, dict[str, set[Any]]]) -> dict[str, dict[str, list[str]]]:
        return {k: {p: [repr(v) for v in sorted(vs, key=_value_order)][:8] for p, vs in ps.items()}
                for k, ps in table.items()}

    constexprs = listed(RECORDER.constexprs)
    batch = listed(prober.batch_constexprs) if prober.batch_constexprs is not None else None
    safety = (f"{sanitizer.INTERPRETER} (every load/store inside its launch's tensors)" if bounds else
              "compute-sanitizer memcheck over the example call and the P0 candidates (PYTORCH_NO_CUDA_MEMORY_CACHING"
              "=1), racecheck over the example call" if sanitized.get("runs") else
              "out-of-bounds accesses show as CUDA errors only when they leave the allocation (compute-sanitizer not "
              f"run: {sanitized.get('not_run') or 'not a CUDA device'}); poisoned guard bytes catch the rest as "
              "non-finite outputs")
    entry_line = _entry_line(fn, target)
    name = getattr(fn, "__qualname__", None) if kb is not None else getattr(fn, "__name__", None)
    return {"probes": [p.as_dict() for p in probes], "entry": name or str(fn), "entry_line": entry_line,
            "target": str(target),
            "launched": launched, "constexpr_values": constexprs, "constexpr_values_batch": batch,
            "batch_new_keys": prober.batch_new_keys, "target_compile": on_target,
            "lines_run": sorted(prober.lines.lines),
            "shape": list(shape) if isinstance(shape, tuple) else shape, "dtype": dtype,
            "device": rt.device, "safety": safety, "reference": ref is not None, "kernelbench": kb is not None,
            "sanitizer": sanitized}


def _sanitize(args: dict[str, Any], rt: Any, probes: list[dict[str, Any]], prober: Prober) -> dict[str, Any]:
    """compute-sanitizer over the chosen variants on a CUDA device (sanitizer.py); why not, otherwise. Its budget is
    what the probes left plus a share of the slack between the probes' budget and the worker call's timeout."""
    if rt.device != "cuda" or args.get("only") is not None or args.get("sanitizer") is False:
        return {"not_run": "not a CUDA device" if rt.device != "cuda" else "a reproducer run", "runs": []}
    if os.environ.get("P2T_SANITIZER", "1") == "0":
        return {"not_run": "turned off (P2T_SANITIZER=0)", "runs": []}
    # (a poisoned CUDA context is this process's: the sanitizer's child starts its own, and confirms the fault)
    budget = float(args.get("budget_s") or DEFAULT_BUDGET_S)
    left = max(0.0, prober.deadline - time.monotonic()) + 0.1 * budget
    chosen = sanitizer.variants(probes, tuple(args.get("sanitize_probes") or ()))
    return {"variants": chosen, **sanitizer.run(args, chosen, left)}


def main(argv: list[str] | None = None) -> int:
    """The reproducer: rerun one probe variant (or all) outside the server; exit 1 while anything fails."""
    ap = argparse.ArgumentParser(prog="python -m pytorch_to_triton.worker.probes", description=main.__doc__)
    ap.add_argument("target", help="the audited Triton file")
    ap.add_argument("--harness", required=True, help="make_inputs(case) (+ ENTRY, SHAPES/AUDIT_SHAPE, reference), or "
                    "a KernelBench-form task reference (the target defines ModelNew)")
    ap.add_argument("--entry")
    ap.add_argument("--shape", type=json.loads, help='the example shape as JSON, e.g. [4, 1000] (KernelBench: the '
                    'sizes, e.g. {"batch_size": 64, "dim": 512})')
    ap.add_argument("--dtype", help="the example dtype (default float32; KernelBench: the problem's own)")
    ap.add_argument("--only", action="append", help='one variant, "PROBE: LABEL" as the report names it (repeat it '
                    "for several)")
    ap.add_argument("--mark", action="store_true", help="print a line before each asked-for variant runs (the "
                    "compute-sanitizer child reads it to put each error on its variant)")
    a = ap.parse_args(argv)
    from .runtime import setup

    res = run_probes({"target": a.target, "harness": a.harness, "entry": a.entry, "shape": a.shape,
                      "dtype": a.dtype, "only": a.only, "budget_s": 1e9, "mark": a.mark, "sanitizer": False,
                      "target_gpus": "none"}, setup())
    failures = [(p["name"], f) for p in res["probes"] for f in p["failures"]]
    if a.only:  # one variant asked for: it fails whatever its tier (a robustness finding's reproducer too)
        failures += [(p["name"], f) for p in res["probes"] for f in p.get("aside") or []]
    for name, f in failures:  # a person's terminal, not the MCP channel
        print(f"FAIL {name}: {f['variant']}: {f['what']} {f.get('detail') or f.get('error', '')}")
    if not a.only:  # robustness records: failures only where the contract gives such inputs (the server decides)
        for p in res["probes"]:
            for f in p.get("aside") or []:
                print(f"ASIDE {p['name']}: {f['variant']}: {f['what']} (robustness kind {f.get('kind')})")
    if not failures:
        print("no probe failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
