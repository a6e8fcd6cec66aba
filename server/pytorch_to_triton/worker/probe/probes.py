"""audit_kernel's dynamic confirmation (worker op "probe"): run the file's public entry on inputs that expose bugs.

Given the audited file, an entry and one example call (a harness in the task format: `make_inputs(case)`, optional
`AUDIT_SHAPE` or `SHAPES`, `ENTRY`, `reference`, and `SKIP_PROBES = {probe: why}` for what the entry's contract rules
out, e.g. rows of a blockwise quantizer that share a block), every probe runs the entry on the GPU, or under the interpreter with its bounds
check (bounds.py), on variants from probe_inputs.py, and compares it with itself (metamorphic) or with the harness's
reference. Nothing here decides severity: the server's audit/evidence.py does, from what each probe saw.

A KernelBench-form task reference (Model, get_inputs, get_init_inputs; no make_inputs) is an example call too:
probe_kb.py runs ModelNew on get_inputs() with Model as the reference, and the sizes move through the problem's
module-level constants.

A failure carries the probe, the variant's label and what went wrong; `python -m pytorch_to_triton.probe_repro
TARGET --harness H --only "PROBE: LABEL"` reruns that one variant and exits 1 while it still fails (the reproducer;
rerun.py runs it here, in a process of its own).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ... import tier_rules as tr
from ..device import interp_compat, target_compile
from ..validation.compare import merged_tolerances, tolerance_for
from ..validation.errors_fmt import describe
from ..validation.poison import POISON
from ..validation.poison import install as install_poison
from ..validation.tasks import (
    Case,
    TaskError,
    dtype_from_name,
    is_kernelbench,
    load_module,
)
from . import probe_inputs as pi
from . import sanitizer
from .bounds import BOUNDS
from .bounds import install as install_bounds
from .entry import _entry, _entry_line, _entry_module, _example_shape, _value_order
from .grad_probes import GradProbes
from .outcome import (
    DEFAULT_BUDGET_S,
    Outcome,
    Poisoned,
    Probe,
    _cuda_usable,
    _finite_inputs,
    _mismatch,
    _nonfinite,
    _tensors,
    missing_op,
    refused,
)
from .shape_probes import LayoutProbes
from .value_probes import ValueProbes

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


class Prober(LayoutProbes, ValueProbes, GradProbes):
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
        from ..device.runtime import RECORDER

        specs_before = len(RECORDER.specs)  # dicts keep insertion order: the keys after it are this call's first
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
            return Outcome(outputs=res, seconds=time.monotonic() - t0, dtypes=[t.dtype for t in outs],
                           new_specs=list(RECORDER.specs)[specs_before:])
        except Exception as e:  # noqa: BLE001 - a failing call is what a probe looks for
            if self.device == "cuda" and not _cuda_usable():
                self.poisoned = f"{type(e).__name__}: {str(e)[:160]}"
            return Outcome(error=e, seconds=time.monotonic() - t0, new_specs=list(RECORDER.specs)[specs_before:])
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
    def retag(got: Outcome, kind: str) -> None:
        """The specialisations `got` launched first belong to robustness `kind` (its failure went aside): their
        compile findings for the target follow that tier (target_compile.judge), until a contract call launches them."""
        from ..device.runtime import RECORDER

        for key in got.new_specs:
            spec = RECORDER.specs.get(key)
            if spec is not None:
                spec.tier, spec.kind = tr.ROBUSTNESS, kind

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
        from ..validation.kernelbench import CandidateInitError

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
            from ..device.runtime import RECORDER

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


def run_probes(args: dict[str, Any], rt: Any, emit: Any = None, patches: Any = None) -> dict[str, Any]:
    """Worker op "probe": args target, harness, entry?, shape?, dtype?, only?, budget_s?."""
    install_poison()
    bounds = rt.interpreter and install_bounds()
    target, harness = Path(args["target"]), Path(args["harness"])
    kb = None
    if args.get("caller"):  # no harness given: the example call from the file's own callers (callers.py)
        from .callers import from_callers

        t0, budget = time.monotonic(), float(args.get("budget_s") or DEFAULT_BUDGET_S)
        try:
            h_mod = from_callers(target, args["caller"], rt, budget, emit)
        except TaskError as e:
            return {"no_example": str(e), "probes": []}
        # the search's time comes out of the probes'; the sanitizer's child runs the same caller
        args = {**args, "budget_s": max(5.0, budget - (time.monotonic() - t0)), "caller_spec": h_mod.spec}
        harness, fn, ref, make, shape, dtype = h_mod.file, h_mod.entry, h_mod.reference, h_mod.make_inputs, \
            h_mod.shape, h_mod.dtype
    elif is_kernelbench(h_mod := load_module(harness, "harness")) and \
            not callable(getattr(h_mod, "make_inputs", None)):
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
    elif args.get("caller"):
        prober.not_for.update(h_mod.not_for)
    # issue 45: the probes whose cases the task's run_validation already ran (the server says why, in its words)
    prober.not_for.update({k: str(v) for k, v in (args.get("skip_probes") or {}).items() if k in PROBES})
    from .probe_lines import LineCoverage, kernel_names

    prober.lines = LineCoverage(target, kernel_names(_entry_module(fn)))
    if emit:
        emit("progress", message=f"probes of {getattr(fn, '__name__', 'entry')} at {shape}")
    from ..device.runtime import RECORDER

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
    if args.get("caller"):  # which caller gave the example, and why those before it did not
        probes[0].notes[:0] = h_mod.notes
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
            "example": {"label": h_mod.label, "spec": h_mod.spec, "call": h_mod.call_text} if args.get("caller") else None,
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

