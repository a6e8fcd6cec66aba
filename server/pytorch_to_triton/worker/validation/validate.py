"""One candidate against the reference, case by case: the Validator runs a case and records findings.

run_validation.py decides which cases run (cases.py makes them) and turns the records into the report."""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ..device.runtime import RECORDER, Runtime, _sync
from . import case_log, cases, composition, kernel_reuse, ref_cache
from . import compare as cmp
from . import memory as mem
from .errors_fmt import describe
from .gradients import Gradients
from .guards import CallEvidence, PatchWatch, guarded_call
from .nest import flatten as _flatten
from .nest import tensors as _tensors
from .output_checks import OutputChecks, _as_tensor
from .poison import FLOAT_POISON_B, INT_OFFSET_B, POISON
from .ref_cache import RefSide
from .tasks import Case, Task, TaskError, clone_inputs, dtype_name, upcast

Emit = Callable[..., None]
BIG_CASE_BYTES = 256 << 20  # after a case this big, cached blocks go back to the driver before the next one
SHRINK_FIX = ("shrink the case: pass sizes={...} overriding the problem's module-level sizes (e.g. "
              "sizes={'batch_size': 256}), or smaller cases=[...] / only_cases=[...]")
# (reference path, its fingerprint, device, interpreter, case name, shape, dtype) -> the case's memory estimate
_ESTIMATES: dict[tuple[Any, ...], mem.Estimate | None] = {}
MAX_CACHED_ESTIMATES = 512
DEFERRED = object()  # Validator._estimate: the case runs first, its estimate comes from its real sizes
# Failing checks in the order a user should fix them (first_fix is the first one present).
PRIORITY = ["exception", "crashed", "cuda_fatal",  # the worker died in that case (case_journal.py)
            "target_compile", "target_resources",  # does not compile / launch for the target GPU (target_compile.py)
            "int32_offset_overflow",  # an offset past 2^31 at the problem's full size (dry_run.py)
            "output_count", "shape_mismatch", "dtype_mismatch", "device_mismatch", "no_triton_launch",
            "calls_reference", "pytorch_compute", "timer_patched", "unwritten_output", "nonfinite", "mismatch",
            "relative_mismatch", "gradient_mismatch", "input_mutated", "stale_result", "nondeterministic",
            "nan_propagation", "side_stream", "thread", "no_cases"]  # nan_propagation after stale_result: a cache fails it too
FIX_HINTS = {
    "exception": "fix the exception first (see error.file:line)",
    "no_cases": "validate without --cases/--only-cases (or name a case that runs; --budget 0 lifts the time budget)",
    "target_compile": "fix the kernel where the GPU compiler points (the interpreter runs it as Python)",
    "target_resources": "smaller BLOCK sizes or fewer num_stages (shared memory), or fewer num_warps (registers)",
    "int32_offset_overflow": "compute the offset in int64 (pid.to(tl.int64) * stride): int32 wraps past 2^31",
    "output_count": "return the same number of outputs as the reference",
    "shape_mismatch": "return outputs with the reference's shapes",
    "dtype_mismatch": "return outputs in the reference's dtype (cast the fp32 accumulator when storing)",
    "device_mismatch": "return outputs on the inputs' device",
    "no_triton_launch": "the candidate must compute with a Triton kernel, not PyTorch",
    "calls_reference": "do not call the reference from the candidate",
    "pytorch_compute": "PyTorch produces the result (see evidence.rule): compute it in the Triton kernels; a library "
                       "matmul/convolution beside Triton kernels that do the rest is fine unless all_triton is required",
    "library_compute": "none needed: a library op beside Triton kernels is a design choice (require all_triton to "
                       "forbid it)",
    "timer_patched": "do not patch timers or torch comparison functions",
    "unwritten_output": "some output elements are never written: check the grid (triton.cdiv) and the store mask",
    "nonfinite": "NaN/Inf where the reference is finite: check the inputs and masked lanes of the worst indices in "
                 "the evidence (first_fix.py names the constructs in the source that can make them)",
    "relative_mismatch": "the outputs are tiny, so atol alone passed them: the values are wrong relative to their "
                         "own scale; check the scaling factors, the epilogue and the dtype of the accumulator",
    "nan_propagation": "NaN/inf in the inputs must reach the same outputs as in the reference: follow the first index "
                       "in the evidence back to the inputs the kernel read for it",
    "mismatch": "wrong values: check masks, offsets, strides and the 'other' of masked loads at the worst indices",
    "gradient_mismatch": "the backward pass differs from autograd of the reference: check the gradient formulas",
    "input_mutated": "the candidate writes into its inputs; write to a fresh output instead",
    "stale_result": "the output does not follow new input values: remove caching keyed on shape or data_ptr",
    "nondeterministic": "two runs on the same inputs differ: a race, order-dependent atomics, or reads outside the "
                        "inputs (a missing mask reads whatever memory follows)",
    "side_stream": "launch on the current stream; no torch.cuda.Stream in the candidate",
    "thread": "do not start threads in the candidate",
}


def _nbytes(xs: Any) -> int:
    return sum(t.numel() * t.element_size() for t in _tensors(_flatten(xs)))


class Validator(OutputChecks, Gradients):
    """Holds the task and accumulates the report for one candidate."""

    def __init__(self, args: dict[str, Any], rt: Runtime, emit: Emit, patches: PatchWatch):
        self.args = args
        self.rt = rt
        self.emit = emit
        self.patches = patches
        self.device = rt.device
        self.case: Case | None = None
        self.findings: dict[str, dict[str, Any]] = {}
        # The tier of the case now running (cases.py): a robustness case's findings go to `robustness`, keyed by
        # (kind, check), and never decide ok.
        self.tier, self.kind = cases.CONTRACT, None
        self.robustness: dict[tuple[str, str], dict[str, Any]] = {}
        self.values: dict[str, str] | None = None  # the value recipes and hook of the user's case now running
        self.hook: str | None = None
        self.notes: list[str] = []
        self.tols: list[cmp.Tolerance] = []  # the case now running: its Tolerance per output (output_checks.py)
        self.tol_notes: dict[tuple[str, str], tuple[float, int]] = {}  # (kind, dtype) -> (own error, note index)
        self.cases: list[dict[str, Any]] = []
        self._estimates: dict[tuple[Any, ...], mem.Estimate | None] = {}
        self._deferred: tuple[Any, ...] | None = None  # the case now running without its estimate (_estimate)
        self._ref_fp: str | None = None
        self.user_dirs = [Path(args["workspace"]).resolve()]
        self.composer = composition.Composer(args, self.device)  # Triton vs library ops, and when that fails
        # Per-case events for the server, and what an earlier worker of this validation finished (case_log.py)
        self.log = case_log.CaseLog(emit, args.get("resume"), self.device)
        self.findings.update({f["check"]: f for f in self.log.findings})
        self.notes.extend(self.log.notes)
        self._ck = ""
        self.ref_path = Path(args["reference"])
        self.cand_path = Path(args["candidate"])

    # ---- findings -------------------------------------------------------------------------------
    def find(self, check: str, case: str, message: str, evidence: Any = None, severity: str = "fail") -> None:
        """Record a named finding once per check (later cases add to its count); in a robustness case, once per
        (kind, check) in the robustness section, with the kind's fix."""
        if self.tier == cases.ROBUSTNESS:
            key = (self.kind or "other", check)
            r = self.robustness.get(key)
            if r is None:
                self.robustness[key] = {"kind": key[0], "title": cases.TITLES.get(key[0], key[0]), "check": check,
                                        "severity": severity, "message": message, "case": case, "evidence": evidence,
                                        "count": 1, "fix": cases.FIXES.get(key[0], FIX_HINTS.get(check, ""))}
            else:
                r["count"] += 1
            return
        f = self.findings.get(check)
        if f is None:
            self.findings[check] = {"check": check, "severity": severity, "message": message, "case": case,
                                    "evidence": evidence, "count": 1, "fix": FIX_HINTS.get(check, "")}
        else:
            f["count"] += 1

    # ---- calls ----------------------------------------------------------------------------------
    def _reference(self, fn: Callable, inputs: list[Any]) -> Any:
        with torch.no_grad():
            out = fn(*inputs)
        _sync(self.device)
        return out

    def _ref64(self, inputs: list[Any], task: Task) -> tuple[Any, str | None]:
        """Reference on float64-upcast inputs (the upcast copies are freed on return); (None, note) when it
        cannot run. An out-of-memory error propagates: the harness itself does not fit (run_case names it)."""
        if not any(isinstance(t, torch.Tensor) and t.is_floating_point() for t in inputs):
            return None, None
        try:
            fn = copy.deepcopy(task.ref_model).double() if task.kernelbench else task.ref_fn
            return self._reference(fn, upcast(inputs)), None
        except Exception as e:  # noqa: BLE001 - e.g. a kernel that has no float64 implementation
            self.log.check(e, self.case.name if self.case else "?", "reference")
            if mem.is_oom(e):
                raise
            mem.forget(e)
            return None, (f"float64 reference unavailable ({type(e).__name__}: {str(e)[:120]}); compared "
                          "against the reference in the input dtype, under the declared or default tolerance alone "
                          "(PyTorch's own error cannot be measured)")

    def _candidate(self, fn: Callable, inputs: list[Any], poison_value: float, int_offset: int,
                   case: str) -> tuple[Any, CallEvidence, float]:
        POISON.float_value, POISON.int_offset, POISON.active = poison_value, int_offset, True
        guard = guarded_call(str(self.ref_path), self.patches, time_gpu=self.composer.wants_timing(case))
        try:
            t0 = time.perf_counter()
            with guard, torch.no_grad():
                out = fn(*inputs)
                _sync(self.device)
            dt = (time.perf_counter() - t0) * 1e3
        finally:
            POISON.active = False
        return out, guard.evidence, dt

    # ---- one case -------------------------------------------------------------------------------
    def check_evidence(self, ev: CallEvidence, case: str, in_elems: int, out_elems: int,
                       out_bytes: int = 0) -> dict[str, Any]:
        """Turn what the guards saw into findings."""
        if ev.patched:
            self.find("timer_patched", case, "the candidate replaced functions the harness relies on (restored)",
                      ev.patched)
        if ev.reference_called:
            self.find("calls_reference", case, "the candidate executed code from the reference file")
        if ev.threads_started:
            self.find("thread", case, f"the candidate started {ev.threads_started} thread(s)")
        if ev.streams:
            self.find("side_stream", case, "the candidate used another CUDA stream", ev.streams)
        # Triton launches vs PyTorch/library ops, and the rules that fail a candidate for them: composition.py
        return self.composer.judge(self, ev, case, in_elems, out_elems, out_bytes)

    def run_case(self, task: Task, name: str, shape: Any, dtype: torch.dtype, scale: float, trial: int,
                 *, inputs: list[Any] | None = None, variant: str = "", fp64: bool = True,
                 state: dict[str, Any] | None = None) -> dict[str, Any]:
        """Validate one (case, dtype, trial); returns the case record (with its peak memory and io bytes)."""
        label = f"{name}{':' + variant if variant else ''}"
        RECORDER.origin = (self.tier, self.kind)  # its launches' specialisations take its tier (target_compile.py)
        seed = cases.case_seed(self.args, name, dtype, trial)
        rec: dict[str, Any] = {"name": label, "dtype": dtype_name(dtype), "trial": trial, "seed": seed, "ok": False,
                               "tier": self.tier}
        if self.kind:
            rec["robustness_kind"] = self.kind
        self._ck = ck = case_log.key(label, rec["dtype"], trial)
        prior = self.log.prior(ck)
        if prior is not None:  # finished (or crashed) in an earlier worker of this validation: not run again
            return dict(prior)
        self.log.phase(ck, label, "reference")  # the memory estimate and make_inputs run the reference's side too
        case = Case(name, shape, dtype, self.device, seed, scale)
        self.case = case  # per-case TOLERANCES functions see it
        probe = mem.CaseProbe(self.device, extra=_nbytes(inputs) if inputs is not None else 0)
        self._deferred = None
        retry = False
        try:
            if inputs is None:
                fp64 = self._check_memory(task, case, label, fp64, rec)
                inputs = task.make_inputs(case)
                if self.values or self.hook:
                    inputs = cases.edit_values(inputs, self.values, self.hook, self._input_names(task), seed, case)
                    rec["values"] = dict(self.values or {}, **({"hook": Path(self.hook).name} if self.hook else {}))
            self._case_body(task, rec, label, case, inputs, variant, fp64, state)
        except TaskError:
            raise
        except Exception as e:
            if not mem.is_oom(e):
                raise
            mem.forget(e)
            inputs = None
            if self._deferred is None:
                raise self._harness_oom(label, rec, e) from None
            mem.release(self.device)
            retry = self._estimate_after_oom(task, case, label, fp64, rec)  # refuses a case that cannot fit
            if not retry:
                raise self._harness_oom(label, rec, e) from None
        finally:
            inputs = None
            self._deferred = None
            rec.update(probe.finish())
            if not rec.get("ok") or (rec.get("io_bytes") or 0) > BIG_CASE_BYTES:
                mem.release(self.device)  # a failure's traceback or a big case's cached blocks go back now
        if retry:  # the float64 copy did not fit: the case again, against the reference in its own dtype
            return self.run_case(task, name, shape, dtype, scale, trial, variant=variant, fp64=False, state=state)
        rec["ok"] = bool(rec["ok"]) and "error" not in rec
        self.log.done(ck, rec, self.findings, self.notes)
        return rec

    def _case_body(self, task: Task, rec: dict[str, Any], label: str, case: Case, inputs: list[Any], variant: str,
                   fp64: bool, state: dict[str, Any] | None) -> None:
        """The phases of one case, ordered so that at most ~2.5x its inputs+outputs are live (see memory.py)."""
        rec["shape"] = [list(t.shape) for t in _tensors(inputs)]
        side = self._cached_reference_side(task, rec, label, case, inputs, variant, fp64, state)
        if side is None:
            return  # the reference rejects this layout variant (noted, skipped)
        if self._deferred is not None:  # the case's estimate from its real sizes, kept for its later runs
            est = mem.real_estimate(inputs, side.ref_meta, self.rt.interpreter)
            self._keep_estimate(self._deferred, est)
            rec["mem_estimate_bytes"] = est.need(fp64)
        expected, own, ref_meta = list(side.expected), side.own, side.ref_meta
        ref_fp, ref_mutates = side.ref_fp, side.ref_mutates
        in_elems = sum(t.numel() for t in _tensors(inputs))
        out_elems = sum(math.prod(meta[0]) for meta in ref_meta)
        rec["io_bytes"] = _nbytes(inputs) + side.ref_bytes

        # Run A: NaN poison, on a copy of the inputs (to see whether the candidate writes into them).
        self.log.phase(self._ck, label, "candidate")
        cand_in = clone_inputs(inputs)
        try:
            out_a, ev, ms = self._candidate(task.cand_fn, cand_in, math.nan, 0, label)
        except Exception as e:  # noqa: BLE001 - the candidate's failure is data
            self._candidate_error(rec, label, e, "")
            return
        rec["time_ms"] = round(ms, 3)
        rec["launches"] = ev.launches
        rec["composition"] = self.check_evidence(ev, label, in_elems, out_elems, composition.output_bytes(ref_meta))
        mutated = not cmp.same_bits(cand_in, inputs)
        del cand_in
        if mutated and not ref_mutates:
            self.find("input_mutated", label, "the candidate modified its inputs (the reference does not)")
        # Run B: finite sentinel poison, same inputs: tells unwritten elements and races apart. It runs on the
        # original inputs themselves (nothing later needs them pristine), unless run A wrote into its copy.
        b_in = clone_inputs(inputs) if mutated else inputs
        try:
            out_b, _, _ = self._candidate(task.cand_fn, b_in, FLOAT_POISON_B, INT_OFFSET_B, label)
        except Exception as e:  # noqa: BLE001
            del out_a
            self._candidate_error(rec, label, e, "second run raised ")
            return
        a_list, b_list = _flatten(out_a), _flatten(out_b)
        out_fp = cmp.fingerprint(a_list) if state is not None else None  # one per output
        del out_a, out_b
        ok = self._compare_outputs(rec, label, ref_meta, expected, own, a_list, b_list)
        del a_list, b_list, expected
        if ok and state is not None and out_elems > 0:
            ok = self._stale_checks(task, rec, label, case, b_in, out_fp, ref_fp, ref_mutates, state) and ok
        rec["ok"] = ok

    def _cached_reference_side(self, task: Task, rec: dict[str, Any], label: str, case: Case, inputs: list[Any],
                               variant: str, fp64: bool, state: dict[str, Any] | None) -> RefSide | None:
        """The reference's side of the case, from worker/validation/ref_cache.py when the reference file, the case and its
        inputs are those of an earlier call; None when the reference rejects this layout variant."""
        key = None
        # KernelBench models are rebuilt per call; and until this call has recorded the reference's own ops once
        # (composition's recompute rule needs them), the reference runs for real.
        if ref_cache.enabled() and not task.kernelbench and self.composer.ref_ops is not None:
            if self._ref_fp is None:
                self._ref_fp = kernel_reuse.fingerprint(self.ref_path)  # content + the folder's helper files
            tol = self.args.get("tolerances_merged") or {}
            key = (str(self.ref_path), self._ref_fp, self.args.get("reference_entry"), self.device,
                   self.rt.interpreter, label, repr(case.shape), str(case.dtype), case.scale, case.seed, fp64,
                   state is not None, repr(sorted(tol.items(), key=str)))
            side = ref_cache.get(key, inputs)
            if side is not None:
                self.notes.extend(side.notes)
                return side
        n_notes = len(self.notes)
        side = self._reference_side(task, rec, label, case, inputs, variant, fp64, state)
        if side is not None and key is not None:
            side.notes = self.notes[n_notes:]
            ref_cache.put(key, inputs, side)
        return side

    def _reference_side(self, task: Task, rec: dict[str, Any], label: str, case: Case, inputs: list[Any],
                        variant: str, fp64: bool, state: dict[str, Any] | None) -> RefSide | None:
        """Run the reference (float64, then native on a copy) and derive what the candidate's runs are checked
        against; None when the reference rejects this layout variant."""
        # 1. The float64 reference first: its upcast inputs are dropped as soon as it returns.
        ref64, note64 = self._ref64(inputs, task) if fp64 else (None, None)
        # 2. The native reference on a copy (a reference that writes into its inputs must not change them).
        ref_in = clone_inputs(inputs)
        try:
            with self.composer.reference():
                ref_out = self._reference(task.ref_fn, ref_in)
        except Exception as e:
            self.log.check(e, label, "reference")  # a device-side assert in the reference: the harness's fault
            if mem.is_oom(e):
                raise
            mem.forget(e)
            if variant:
                self.notes.append(f"reference rejects the {variant} variant of {case.name} ({type(e).__name__}); "
                                  "skipped")
                rec.update(ok=True, skipped=True)
                return None
            raise TaskError("reference", f"the reference raised on case {label} ({dtype_name(case.dtype)}): "
                            f"{type(e).__name__}: {e}. Fix make_inputs or the reference", usage=True) from None
        if note64 and not any(n.startswith(note64.split(" (")[0]) for n in self.notes):
            self.notes.append(note64)  # once per candidate: every case of a model fails the same way
        ref_mutates = not cmp.same_bits(ref_in, inputs)
        del ref_in
        ref_list = _flatten(ref_out)
        del ref_out
        ref64_list = _flatten(ref64) if ref64 is not None else [None] * len(ref_list)
        del ref64
        if len(ref64_list) != len(ref_list):
            ref64_list = [None] * len(ref_list)
        ref_bytes = _nbytes(ref_list)
        # 3. What the runs are compared against: the float64 outputs where there are some; the native outputs
        #    are then needed only for their metadata, a fingerprint and their own error (the case's tolerance).
        expected, own = [], []
        for r, r64 in zip(ref_list, ref64_list):
            r_t = _as_tensor(r, self.device)
            if r64 is not None and r_t.is_floating_point():
                e_t = _as_tensor(r64, self.device)
                own.append(cmp.own_error(r_t, e_t))
            else:
                e_t = r_t
                own.append(None)
            expected.append(e_t)
        ref_meta = [(tuple(r.shape), r.dtype, r.device, True) if isinstance(r, torch.Tensor) else
                    (tuple(_as_tensor(r, self.device).shape), _as_tensor(r, self.device).dtype, None, False)
                    for r in ref_list]
        ref_fp = cmp.fingerprint(ref_list) if state is not None else None
        del ref_list, ref64_list
        return RefSide(expected, own, ref_meta, ref_fp, ref_mutates, ref_bytes)

    def _input_names(self, task: Task) -> list[str]:
        model = getattr(task.ref_mod, "Model", None) if task.kernelbench else None
        return cases.input_names(model.forward if model is not None else task.ref_fn)

    def _candidate_error(self, rec: dict[str, Any], label: str, e: BaseException, prefix: str) -> None:
        """Record a candidate's exception (an out-of-memory one with the sizes) and drop its frames' tensors."""
        self.log.check(e, label, "candidate")  # a fatal CUDA error: this case fails, the rest run in a fresh worker
        err = describe(e, "run", self.user_dirs)
        msg = f"{prefix}{err['type']}: {err['message'][:300]}"
        if mem.is_oom(e):
            free, where = mem.free_bytes(self.device)
            msg += (f" [the harness's own copies for this case fit (the reference ran at this size); the candidate "
                    f"asked for more than the {mem.gib(free)} of {where} left: allocate only the outputs]")
        mem.forget(e)
        self.find("exception", label, msg, err)
        rec.update(error=err)

    def _harness_oom(self, label: str, rec: dict[str, Any], e: BaseException) -> TaskError:
        """An out-of-memory error in the reference, the float64 copy or the comparison: the case is too big."""
        free, where = mem.free_bytes(self.device)
        est = rec.get("mem_estimate_bytes")
        need = f"the estimate was {mem.gib(est)}" if est else "no size estimate was possible"
        return TaskError("memory", f"case {label} ({rec['dtype']}) ran out of {where} in the harness itself (the "
                         f"reference, its float64 copy or the comparison, not the candidate): {type(e).__name__}: "
                         f"{str(e)[:200]}; {need}, {mem.gib(free)} are free now. {SHRINK_FIX}", usage=True)

    def _estimate(self, task: Task, case: Case) -> mem.Estimate | None | object:
        """Input/output bytes of a case on fake tensors (cached per case shape and dtype, and across calls per
        reference file content: the fake-tensor run cost 11.5 ms of a warm 16-case validation on the H200).

        DEFERRED while torch._dynamo is not loaded (a worker's first request: FakeTensorMode would import it, 1.5 s
        on the dev CPU, 3.9 s on the H200) and the case's inputs, built on the meta device, take at most
        1/DEFER_FACTOR of the free memory: the case runs, and its estimate is taken from its real sizes once the
        reference has run (_case_body); if it runs out of memory first, _estimate_after_oom estimates it on fake
        tensors and refuses it as the estimate would have."""
        key = (case.name, repr(case.shape), case.dtype)
        if key not in self._estimates and not task.kernelbench:  # KernelBench models are rebuilt per size
            key64 = self._key64(key)
            if key64 in _ESTIMATES:
                self._estimates[key] = _ESTIMATES[key64]
            elif self._can_defer(task, case):
                return DEFERRED
            else:
                self._keep_estimate(key, self._estimate_now(task, case))
        if key not in self._estimates:
            self._estimates[key] = self._estimate_now(task, case)
        return self._estimates[key]

    def _key64(self, key: tuple[Any, ...]) -> tuple[Any, ...]:
        if self._ref_fp is None:
            self._ref_fp = kernel_reuse.fingerprint(self.ref_path)  # content + the folder's helper files
        return (str(self.ref_path), self._ref_fp, self.device, self.rt.interpreter, *key)

    def _keep_estimate(self, key: tuple[Any, ...], est: mem.Estimate | None) -> None:
        self._estimates[key] = _ESTIMATES[self._key64(key)] = est
        while len(_ESTIMATES) > MAX_CACHED_ESTIMATES:
            _ESTIMATES.pop(next(iter(_ESTIMATES)))

    def _can_defer(self, task: Task, case: Case) -> bool:
        """Whether the case may run before its estimate (see _estimate)."""
        if mem.dynamo_loaded() or not mem.DEFER_FACTOR:
            return False
        meta = Case(case.name, case.shape, case.dtype, "meta", case.seed, case.scale)
        nbytes = mem.meta_input_bytes(lambda: task.make_inputs(meta))
        return nbytes is not None and nbytes * mem.DEFER_FACTOR + mem.MARGIN_BYTES <= mem.free_bytes(self.device)[0]

    def _estimate_after_oom(self, task: Task, case: Case, label: str, fp64: bool, rec: dict[str, Any]) -> bool:
        """A case that ran before its estimate ran out of memory in the harness: estimate it on fake tensors now
        and refuse it when it cannot fit (the usage error the estimate gives up front). True: it fits without the
        float64 copy, run it again so; False: it should have fit (the harness's out-of-memory error stands)."""
        key, self._deferred = self._deferred, None
        assert key is not None
        self._keep_estimate(key, self._estimate_now(task, case))
        return fp64 and not self._check_memory(task, case, label, fp64, rec)

    def _estimate_now(self, task: Task, case: Case) -> mem.Estimate | None:
        """Input/output bytes of one case on fake tensors (None when make_inputs cannot run on them)."""
        if task.kernelbench:  # the models are real (built for these sizes); fake inputs flow through them
            fake = Case(case.name, case.shape, case.dtype, self.device, case.seed, case.scale)
            ref: Callable = lambda xs: task.ref_model(*xs)  # None before Task.prepare: outputs guessed
        else:
            fake = Case(case.name, case.shape, case.dtype, "meta", case.seed, case.scale)
            ref = lambda xs: task.ref_fn(*xs)
        est = mem.estimate(lambda: task.make_inputs(fake), ref, self.device, task.ref_model)
        if est is not None:
            est.interpreter = self.rt.interpreter
        if est is not None and task.kernelbench and hasattr(task.ref_model, "parameters"):
            est.params64 = sum(p.numel() * 8 for p in task.ref_model.parameters() if p.is_floating_point())
        return est

    def _check_memory(self, task: Task, case: Case, label: str, fp64: bool, rec: dict[str, Any]) -> bool:
        """Refuse a case that cannot fit before anything is allocated; returns whether the float64 copy fits."""
        est = self._estimate(task, case)
        if est is DEFERRED:
            self._deferred = (case.name, repr(case.shape), case.dtype)
            return fp64
        if est is None:
            return fp64  # make_inputs does not run on fake tensors: no estimate, the OOM handler names the case
        assert isinstance(est, mem.Estimate)
        free, where = mem.free_bytes(self.device)
        need64, need = est.need(True), est.need(False)
        rec["mem_estimate_bytes"] = need64 if fp64 else need
        if fp64 and need64 <= free:
            return True
        if need <= free:
            if fp64:
                rec["mem_estimate_bytes"] = need
                self.notes.append(f"case {label}: the float64 reference would need {mem.gib(need64)} and "
                                  f"{mem.gib(free)} of {where} are free; compared against the reference in "
                                  f"{dtype_name(case.dtype)} instead, under the declared or default tolerance alone")
            return False
        if isinstance(case.shape, dict) or case.shape is None:  # KernelBench: the sizes get_inputs() ran at
            shape = f"at sizes {case.shape}" if case.shape else "(get_inputs() at the module's sizes)"
        else:
            shape = list(case.shape) if isinstance(case.shape, tuple) else case.shape
        raise TaskError("inputs", f"case {label} {shape} needs about {mem.gib(need)} ({est.describe()}; the "
                        f"reference, copies for two candidate runs and the comparison) but {mem.gib(free)} of "
                        f"{where} are free; {SHRINK_FIX}", usage=True)


