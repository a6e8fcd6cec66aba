"""run_validation inside the worker: one candidate against the reference over every case."""

from __future__ import annotations

import _thread
import copy
import math
import os
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from . import compare as cmp
from .errors_fmt import describe
from .guards import CallEvidence, PatchWatch, guarded_call
from .poison import POISON, fill_poison
from .runtime import Runtime
from .tasks import Case, ImportFailure, Task, TaskError, clone_inputs, dtype_name, load_task, upcast

Emit = Callable[..., None]
FLOAT_POISON_B = -7777.0  # run B's poison: finite, so unwritten elements show up in both runs differently
INT_OFFSET_B = 3
# Failing checks in the order a user should fix them (first_fix is the first one present).
PRIORITY = ["exception", "output_count", "shape_mismatch", "dtype_mismatch", "device_mismatch", "no_triton_launch",
            "calls_reference", "pytorch_compute", "timer_patched", "unwritten_output", "nonfinite", "mismatch",
            "gradient_mismatch", "input_mutated", "stale_result", "nondeterministic", "side_stream", "thread"]
FIX_HINTS = {
    "exception": "fix the exception first (see error.file:line)",
    "output_count": "return the same number of outputs as the reference",
    "shape_mismatch": "return outputs with the reference's shapes",
    "dtype_mismatch": "return outputs in the reference's dtype (cast the fp32 accumulator when storing)",
    "device_mismatch": "return outputs on the inputs' device",
    "no_triton_launch": "the candidate must compute with a Triton kernel, not PyTorch",
    "calls_reference": "do not call the reference from the candidate",
    "pytorch_compute": "move the PyTorch compute ops listed in the evidence into the Triton kernel",
    "timer_patched": "do not patch timers or torch comparison functions",
    "unwritten_output": "some output elements are never written: check the grid (triton.cdiv) and the store mask",
    "nonfinite": "NaN/Inf where the reference is finite: accumulate in fp32, subtract the max before exp, add eps",
    "mismatch": "wrong values: check masks, offsets, strides and the 'other' of masked loads at the worst indices",
    "gradient_mismatch": "the backward pass differs from autograd of the reference: check the gradient formulas",
    "input_mutated": "the candidate writes into its inputs; write to a fresh output instead",
    "stale_result": "the output does not follow new input values: remove caching keyed on shape or data_ptr",
    "nondeterministic": "two runs on the same inputs differ: a race, order-dependent atomics, or reads outside the "
                        "inputs (a missing mask reads whatever memory follows)",
    "side_stream": "launch on the current stream; no torch.cuda.Stream in the candidate",
    "thread": "do not start threads in the candidate",
}


def _flatten(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        items = []
        for o in out:
            items.extend(_flatten(o))
        return items
    return [out]


def _tensors(xs: list[Any]) -> list[torch.Tensor]:
    return [x for x in xs if isinstance(x, torch.Tensor)]


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def _same_bits(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.is_floating_point():
            return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
        return bool(torch.equal(a, b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_bits(x, y) for x, y in zip(a, b))
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def _as_tensor(x: Any, device: str) -> torch.Tensor:
    return x if isinstance(x, torch.Tensor) else torch.tensor(x, device=device)


def _nbytes(xs: Any) -> int:
    return sum(t.numel() * t.element_size() for t in _tensors(_flatten(xs)))


class Validator:
    """Holds the task and accumulates the report for one candidate."""

    def __init__(self, args: dict[str, Any], rt: Runtime, emit: Emit, patches: PatchWatch):
        self.args = args
        self.rt = rt
        self.emit = emit
        self.patches = patches
        self.device = rt.device
        self.case: Case | None = None
        self.findings: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []
        self.cases: list[dict[str, Any]] = []
        self.user_dirs = [Path(args["workspace"]).resolve()]
        self.ref_path = Path(args["reference"])
        self.cand_path = Path(args["candidate"])

    # ---- findings -------------------------------------------------------------------------------
    def find(self, check: str, case: str, message: str, evidence: Any = None, severity: str = "fail") -> None:
        """Record a named finding once per check (later cases add to its count)."""
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

    def _ref64(self, inputs: list[Any], task: Task) -> tuple[Any, bool]:
        """Reference on float64-upcast inputs; falls back to the native result when it cannot run."""
        if not any(isinstance(t, torch.Tensor) and t.is_floating_point() for t in inputs):
            return None, False
        try:
            if task.kernelbench:
                fn = copy.deepcopy(task.ref_model).double()
            else:
                fn = task.ref_fn
            return self._reference(fn, upcast(inputs)), True
        except Exception as e:  # noqa: BLE001 - e.g. a kernel that has no float64 implementation
            self.notes.append(f"float64 reference unavailable ({type(e).__name__}: {str(e)[:120]}); compared "
                              "against the reference in the input dtype")
            return None, False

    def _candidate(self, fn: Callable, inputs: list[Any], poison_value: float, int_offset: int,
                   case: str) -> tuple[Any, CallEvidence, float]:
        POISON.float_value, POISON.int_offset, POISON.active = poison_value, int_offset, True
        guard = guarded_call(str(self.ref_path), self.patches)
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
    def check_evidence(self, ev: CallEvidence, case: str, in_elems: int, out_elems: int) -> None:
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
        if ev.launches == 0 and out_elems > 0:
            self.find("no_triton_launch", case, "no Triton kernel was launched for a non-empty output",
                      {"pytorch_ops": ev.compute_ops})
        heavy = ev.heavy_ops
        big = in_elems >= 64 and ev.compute_elems >= 0.5 * in_elems
        if heavy or (big and ev.compute_ops):
            self.find("pytorch_compute", case, "PyTorch computes part of the result outside Triton",
                      {"ops": ev.compute_ops, "elements_touched": ev.compute_elems, "input_elements": in_elems})
        elif ev.compute_ops:
            self.find("pytorch_compute", case, "small PyTorch ops in the wrapper (allowed, listed for review)",
                      {"ops": ev.compute_ops}, severity="warn")

    def run_case(self, task: Task, name: str, shape: Any, dtype: torch.dtype, scale: float, trial: int,
                 *, inputs: list[Any] | None = None, variant: str = "", fp64: bool = True,
                 state: dict[str, Any] | None = None) -> dict[str, Any]:
        """Validate one (case, dtype, trial); returns the case record."""
        label = f"{name}{':' + variant if variant else ''}"
        seed = (int(self.args.get("seed", 0)) * 1_000_003 + zlib.crc32(f"{name}:{dtype}".encode()) + trial) % 2**31
        rec: dict[str, Any] = {"name": label, "dtype": dtype_name(dtype), "trial": trial, "seed": seed, "ok": False}
        case = Case(name, shape, dtype, self.device, seed, scale)
        self.case = case  # per-case TOLERANCES functions see it
        if inputs is None:
            self._check_memory(task, case)
            inputs = task.make_inputs(case)
        rec["shape"] = [list(t.shape) for t in _tensors(inputs)]
        ref_in = clone_inputs(inputs)
        try:
            ref_out = self._reference(task.ref_fn, ref_in)
        except Exception as e:
            if variant:
                self.notes.append(f"reference rejects the {variant} variant of {name} ({type(e).__name__}); skipped")
                rec.update(ok=True, skipped=True)
                return rec
            raise TaskError("reference", f"the reference raised on case {label} ({dtype_name(dtype)}): "
                            f"{type(e).__name__}: {e}. Fix make_inputs or the reference", usage=True) from e
        ref_mutates = not _same_bits(ref_in, inputs)
        ref64, have64 = self._ref64(inputs, task) if fp64 else (None, False)
        ref_list = _flatten(ref_out)
        ref64_list = _flatten(ref64) if have64 else [None] * len(ref_list)
        if len(ref64_list) != len(ref_list):
            ref64_list = [None] * len(ref_list)
        in_elems = sum(t.numel() for t in _tensors(inputs))
        out_elems = sum(_as_tensor(r, self.device).numel() for r in ref_list)

        # Run A: NaN poison.
        cand_in = clone_inputs(inputs)
        try:
            out_a, ev, ms = self._candidate(task.cand_fn, cand_in, math.nan, 0, label)
        except Exception as e:  # noqa: BLE001 - the candidate's failure is data
            err = describe(e, "run", self.user_dirs)
            self.find("exception", label, f"{err['type']}: {err['message'][:300]}", err)
            rec.update(error=err)
            return rec
        rec["time_ms"] = round(ms, 3)
        rec["launches"] = ev.launches
        self.check_evidence(ev, label, in_elems, out_elems)
        if not ref_mutates and not _same_bits(cand_in, inputs):
            self.find("input_mutated", label, "the candidate modified its inputs (the reference does not)")
        # Run B: finite sentinel poison, same inputs: tells unwritten elements and races apart.
        try:
            out_b, _, _ = self._candidate(task.cand_fn, clone_inputs(inputs), FLOAT_POISON_B, INT_OFFSET_B, label)
        except Exception as e:  # noqa: BLE001
            err = describe(e, "run", self.user_dirs)
            self.find("exception", label, f"second run raised {err['type']}: {err['message'][:300]}", err)
            rec.update(error=err)
            return rec
        ok = self._compare_outputs(rec, label, ref_list, ref64_list, _flatten(out_a), _flatten(out_b))
        if ok and state is not None and out_elems > 0:
            ok = self._stale_checks(task, rec, label, case, cand_in, out_a, ref_out, state) and ok
        rec["ok"] = ok and "error" not in rec
        return rec

    def _compare_outputs(self, rec: dict[str, Any], label: str, ref_list: list[Any], ref64_list: list[Any],
                         a_list: list[Any], b_list: list[Any]) -> bool:
        if len(a_list) != len(ref_list):
            self.find("output_count", label, f"{len(a_list)} outputs, the reference returns {len(ref_list)}")
            return False
        ok = True
        outs = []
        tol_over = self.args.get("tolerances_merged") or {}
        for i, (r, r64, a, b) in enumerate(zip(ref_list, ref64_list, a_list, b_list)):
            r_t, a_t, b_t = _as_tensor(r, self.device), _as_tensor(a, self.device), _as_tensor(b, self.device)
            where = f"output {i}"
            if tuple(a_t.shape) != tuple(r_t.shape):
                self.find("shape_mismatch", label, f"{where}: shape {list(a_t.shape)}, expected {list(r_t.shape)}")
                ok = False
                continue
            if a_t.dtype != r_t.dtype:
                self.find("dtype_mismatch", label, f"{where}: dtype {a_t.dtype}, expected {r_t.dtype}")
                ok = False
                continue
            if isinstance(r, torch.Tensor) and a_t.device != r_t.device:
                self.find("device_mismatch", label, f"{where}: device {a_t.device}, expected {r_t.device}")
                ok = False
                continue
            rtol, atol = cmp.tolerance_for(r_t.dtype, tol_over, self.case)
            expected = _as_tensor(r64, self.device) if r64 is not None and r_t.is_floating_point() else r_t
            m = cmp.compare(a_t, expected, rtol, atol)
            unwritten = cmp.poison_mask(a_t, b_t, POISON.int_value(a_t.dtype) if not a_t.is_floating_point() else
                                        math.nan, FLOAT_POISON_B if a_t.is_floating_point() else
                                        (POISON.int_value(a_t.dtype) or 0) + INT_OFFSET_B
                                        if POISON.int_value(a_t.dtype) is not None else None)
            n_unwritten = int(unwritten.sum()) if a_t.numel() else 0
            m["unwritten"] = n_unwritten
            if n_unwritten:
                first = cmp._index(int(torch.nonzero(unwritten.reshape(-1))[0]), tuple(a_t.shape))
                self.find("unwritten_output", label, f"{where}: {n_unwritten} of {a_t.numel()} elements never "
                          f"written (poison survived two runs); first at index {first}",
                          {"first_index": first, "count": n_unwritten})
            elif m["nonfinite"]:
                self.find("nonfinite", label, f"{where}: {m['nonfinite']} NaN/Inf values where the reference is finite",
                          m["worst"][:3])
            if not m["ok"] and not n_unwritten:
                self.find("mismatch", label, f"{where}: {m['mismatches']} of {m['numel']} elements outside "
                          f"rtol={rtol:g} atol={atol:g}; max abs err {m['max_abs_err']:.3g}",
                          {"worst": m["worst"], "first_bad_index": m.get("first_bad_index")})
            if not n_unwritten:
                same, d = cmp.same_within_rounding(a_t, b_t)
                if not same:
                    self.find("nondeterministic", label, f"{where}: two runs on identical inputs differ by up to "
                              f"{d:.3g} (beyond rounding): a race or order-dependent atomics")
                    ok = False
            if r64 is not None and r_t.is_floating_point() and r_t.numel():
                native = cmp.compare(r_t, expected, rtol, atol)
                m["reference_native_max_abs_err"] = native["max_abs_err"]
                if not native["ok"]:
                    self.notes.append(f"PyTorch's own {dtype_name(r_t.dtype)} result for {label} is outside the "
                                      f"default tolerance vs float64 (max abs {native['max_abs_err']:.3g}); "
                                      "consider declaring TOLERANCES")
            ok = ok and m["ok"] and not n_unwritten
            outs.append({k: m[k] for k in ("max_abs_err", "max_rel_err", "rel_l2_err", "mismatches", "nonfinite",
                                           "unwritten", "worst", "rtol", "atol")})
        rec["outputs"] = outs
        for key in ("max_abs_err", "max_rel_err", "rel_l2_err"):
            rec[key] = max((o[key] for o in outs), default=0.0)
        for key in ("mismatches", "nonfinite", "unwritten"):
            rec[key] = sum(o[key] for o in outs)
        rec["worst"] = next((o["worst"] for o in outs if o["worst"]), [])
        return ok

    def _stale_checks(self, task: Task, rec: dict[str, Any], label: str, case: Case, cand_in: list[Any],
                      out_a: Any, ref_out: Any, state: dict[str, Any]) -> bool:
        """Fresh values in the same tensors, and fresh tensors across trials: the output must follow."""
        key = (label, rec["dtype"])
        prev = state.get(key)
        state[key] = (out_a, ref_out)
        if prev is not None and _same_bits(prev[0], out_a) and not _same_bits(prev[1], ref_out):
            self.find("stale_result", label, "the output equals the previous trial's although the inputs changed")
            return False
        if rec["trial"] != 0:
            return True
        fresh_case = Case(case.name, case.shape, case.dtype, case.device, case.seed + 7_654_321, case.scale)
        fresh = task.make_inputs(fresh_case)
        for dst, src in zip(cand_in, fresh):
            if isinstance(dst, torch.Tensor) and isinstance(src, torch.Tensor) and dst.shape == src.shape:
                dst.copy_(src)  # same objects, same data_ptr, new values
        ref_new = self._reference(task.ref_fn, clone_inputs(cand_in))
        try:
            out_c, _, _ = self._candidate(task.cand_fn, cand_in, math.nan, 0, label)
        except Exception:  # noqa: BLE001 - reported by the main runs if it is systematic
            return True
        for r, c in zip(_flatten(ref_new), _flatten(out_c)):
            r_t, c_t = _as_tensor(r, self.device), _as_tensor(c, self.device)
            if r_t.shape != c_t.shape:
                continue
            rtol, atol = cmp.tolerance_for(r_t.dtype, self.args.get("tolerances_merged"), self.case)
            if not cmp.compare(c_t, r_t, max(rtol, 1e-3) * 4, max(atol, 1e-3) * 4)["ok"]:
                self.find("stale_result", label, "new values written into the same input tensors did not change "
                          "the output accordingly (caching on data_ptr or shape?)")
                return False
        return True

    def _check_memory(self, task: Task, case: Case) -> None:
        meta = Case(case.name, case.shape, case.dtype, "meta", case.seed, case.scale)
        try:
            need = _nbytes(task.make_inputs(meta))
        except Exception:  # noqa: BLE001 - make_inputs may not support meta tensors; then we cannot estimate
            return
        # originals, two candidate copies, a reference copy and float64 copies (up to 4x for fp16)
        factor = 8
        if self.device == "cuda":
            free, where = torch.cuda.mem_get_info()[0], "GPU memory"
        else:
            free, where = _mem_available(), "host memory"
            limit = int(os.environ.get("P2T_WORKER_MEMORY_BYTES") or 0)  # set by the server (worker_client.Limits)
            if limit and limit - _rss_self() < free:
                free, where = max(0, limit - _rss_self()), "host memory under the worker's memory limit"
        if need * factor > free:
            raise TaskError("inputs", f"case {case.name} {list(case.shape) if not isinstance(case.shape, dict) else case.shape} "
                            f"needs about {need * factor / 2**30:.1f} GiB (inputs {need / 2**30:.2f} GiB, x{factor} for "
                            f"copies and the float64 reference) but {free / 2**30:.1f} GiB of {where} are free; use a "
                            "smaller shape", usage=True)

    # ---- gradients ------------------------------------------------------------------------------
    def run_gradients(self, task: Task, name: str, shape: Any, dtype: torch.dtype) -> dict[str, Any] | None:
        """Compare input gradients of candidate vs reference (float64) for one case."""
        seed = (int(self.args.get("seed", 0)) * 1_000_003 + zlib.crc32(f"grad:{name}:{dtype}".encode())) % 2**31
        case = Case(name, shape, dtype, self.device, seed)
        self.case = case
        inputs = task.make_inputs(case)
        idx = getattr(task.ref_mod, "GRAD_INPUTS", None)
        if idx is None:
            idx = [i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.is_floating_point()]
        if not idx or sum(t.numel() for t in _tensors(inputs)) == 0:
            return None
        label = f"{name}:grad"
        rec: dict[str, Any] = {"name": label, "dtype": dtype_name(dtype), "trial": 0, "seed": seed, "ok": False,
                               "shape": [list(t.shape) for t in _tensors(inputs)]}

        def run(fn: Callable, xs: list[Any]) -> list[torch.Tensor | None]:
            xs = [x.detach().clone().requires_grad_(i in idx) if isinstance(x, torch.Tensor) and i in idx else x
                  for i, x in enumerate(xs)]
            outs = [o for o in _flatten(fn(*xs)) if isinstance(o, torch.Tensor) and o.requires_grad]
            g = torch.Generator(device="cpu").manual_seed(seed + 1)
            # The same upstream gradient for both sides: drawn, rounded to the candidate's dtype, then cast to
            # each side's output dtype (the float64 reference must not see digits the candidate never got).
            grads = [torch.randn(o.shape, generator=g).to(dtype).to(o.device, o.dtype) for o in outs]
            torch.autograd.backward(outs, grads)
            _sync(self.device)
            return [xs[i].grad for i in idx]

        ref_g = run(task.ref_fn, upcast(inputs))
        try:
            POISON.float_value, POISON.int_offset, POISON.active = math.nan, 0, True
            cand_g = run(task.cand_fn, clone_inputs(inputs))
        except Exception as e:  # noqa: BLE001
            err = describe(e, "run", self.user_dirs)
            self.find("exception", label, f"backward raised {err['type']}: {err['message'][:300]}", err)
            rec["error"] = err
            return rec
        finally:
            POISON.active = False
        ok = True
        outs = []
        for i, (r, c) in zip(idx, zip(ref_g, cand_g)):
            if r is None or c is None:
                if (r is None) != (c is None):
                    what = ("missing: the candidate's output carries no autograd graph to this input; implement "
                            "backward (torch.autograd.Function) or mark a forward-only stage SUPPORTS_BACKWARD = False"
                            if c is None else "extra: the reference gives no gradient for it")
                    self.find("gradient_mismatch", label, f"input {i}: gradient is {what}")
                    ok = False
                continue
            rtol, atol = cmp.tolerance_for(inputs[i].dtype, self.args.get("tolerances_merged"), self.case)
            if c.shape != r.shape:
                self.find("gradient_mismatch", label, f"input {i}: gradient shape {list(c.shape)} vs {list(r.shape)}")
                ok = False
                continue
            m = cmp.compare(c, r, rtol, atol)
            if not m["ok"]:
                self.find("gradient_mismatch", label, f"gradient of input {i}: {m['mismatches']} of {m['numel']} "
                          f"elements outside tolerance; max abs err {m['max_abs_err']:.3g}", m["worst"])
                ok = False
            outs.append({"input": i, **{k: m[k] for k in ("max_abs_err", "max_rel_err", "rel_l2_err", "mismatches")}})
        rec.update(ok=ok, outputs=outs, max_abs_err=max((o["max_abs_err"] for o in outs), default=0.0),
                   max_rel_err=max((o["max_rel_err"] for o in outs), default=0.0),
                   rel_l2_err=max((o["rel_l2_err"] for o in outs), default=0.0),
                   mismatches=sum(o["mismatches"] for o in outs))
        return rec


def _rss_self() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _mem_available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 << 30


def _noncontiguous_variants(inputs: list[Any]) -> dict[str, list[Any]]:
    """Same values, other layouts: a transposed layout (rank >= 2) and a strided slice."""
    tensors = _tensors(inputs)
    if not tensors or all(t.numel() <= 1 for t in tensors):
        return {}
    out: dict[str, list[Any]] = {}
    if any(t.dim() >= 2 for t in tensors):
        out["transposed"] = [
            x.transpose(-1, -2).contiguous().transpose(-1, -2) if isinstance(x, torch.Tensor) and x.dim() >= 2 else x
            for x in inputs
        ]

    def strided(x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 0:
            return x
        big = torch.empty((*x.shape[:-1], 2 * x.shape[-1]), dtype=x.dtype, device=x.device)
        fill_poison(big)  # the gaps hold poison: a kernel reading them produces NaN
        view = big[..., ::2]
        view.copy_(x)
        return view

    out["strided"] = [strided(x) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    return out


def validate_candidate(args: dict[str, Any], rt: Runtime, emit: Emit, patches: PatchWatch) -> dict[str, Any]:
    """The whole validation of one candidate file; returns the candidate's report as a dict."""
    v = Validator(args, rt, emit, patches)
    report: dict[str, Any] = {"candidate": args["candidate_display"], "ok": False, "cases": [], "findings": [],
                              "notes": v.notes, "error": None}
    t_start = time.perf_counter()
    threads0 = _thread._count()
    try:
        task = load_task(v.ref_path, v.cand_path, args.get("reference_entry"), args.get("candidate_entry"), rt.device)
    except ImportFailure as e:
        err = describe(e.exc, "import", v.user_dirs)
        err["file_role"] = e.which
        if e.which == "reference":
            raise TaskError("import", f"the reference failed to import: {err['message']} "
                            f"(line {err.get('line')})", usage=True) from e
        report["error"] = err
        v.find("exception", "import", f"{e.which} failed to import: {err['type']}: {err['message'][:300]}", err)
        report["findings"] = list(v.findings.values())
        return report
    patched = patches.check_and_restore()  # import-time patches would otherwise change the reference's result
    if patched:
        v.find("timer_patched", "import", "importing the candidate replaced functions the harness or the reference "
               "relies on (restored before any case ran)", patched)
    started = _thread._count() - threads0
    if started > 0:  # a thread started at import and still running does work the per-call guards cannot see
        v.find("thread", "import", f"importing the candidate started {started} thread(s) that are still running")
    args["tolerances_merged"] = cmp.merged_tolerances(task.ref_mod, args.get("tolerances"))
    specs = task.case_specs(args.get("dtypes"), args.get("cases"), bool(args.get("replace_cases")),
                           args.get("only_cases"))
    trials = max(1, int(args.get("trials", 3)))
    noncontig = bool(args.get("noncontiguous", getattr(task.ref_mod, "NONCONTIGUOUS", True))) and not task.kernelbench
    total = len(specs) * trials + (2 if noncontig else 0)
    state: dict[str, Any] = {}
    done = 0
    failed_cases: set[str] = set()
    for name, shape, dtype, scale in specs:
        for trial in range(trials):
            done += 1
            emit("progress", message=f"{report['candidate']}: {name} {dtype_name(dtype)} trial {trial + 1}/{trials}",
                 progress=done, total=total)
            rec = v.run_case(task, name, shape, dtype, scale, trial, state=state)
            v.cases.append(rec)
            if not rec["ok"]:
                failed_cases.add(name)
                break  # one failing trial is enough; the next case tells more
    if noncontig:
        first = next(((n, s, d, sc) for n, s, d, sc in specs if n == "medium"), None) or next(
            ((n, s, d, sc) for n, s, d, sc in specs if n not in ("edge_empty", "edge_single")), None)
        if first is not None:
            name, shape, dtype, scale = first
            seed = (int(args.get("seed", 0)) * 1_000_003 + zlib.crc32(f"{name}:{dtype}".encode())) % 2**31
            base = task.make_inputs(Case(name, shape, dtype, rt.device, seed, scale))
            for variant, inputs in _noncontiguous_variants(base).items():
                done += 1
                emit("progress", message=f"{report['candidate']}: {name}:{variant}", progress=done, total=total)
                v.cases.append(v.run_case(task, name, shape, dtype, scale, 0, inputs=inputs, variant=variant))
    if args.get("gradients") and getattr(task.cand_mod, "SUPPORTS_BACKWARD", True) is False:
        v.notes.append("gradients not checked: the candidate declares SUPPORTS_BACKWARD = False (a forward-only "
                       "stage); validate the stage that implements backward with gradients=true")
    elif args.get("gradients"):
        for name, shape, dtype, _ in specs[: max(1, len(specs))]:
            if name in failed_cases:
                continue
            rec = v.run_gradients(task, name, shape, dtype)
            if rec is not None:
                v.cases.append(rec)
    if args.get("large_offsets"):
        v.cases.extend(_large_case(v, task, specs))
    report["cases"] = v.cases
    findings = sorted(v.findings.values(), key=lambda f: (f["severity"] != "fail", PRIORITY.index(f["check"])
                                                          if f["check"] in PRIORITY else 99))
    report["findings"] = findings
    report["ok"] = all(c["ok"] for c in v.cases) and not any(f["severity"] == "fail" for f in findings)
    report["time_s"] = round(time.perf_counter() - t_start, 3)
    report["launched_kernels"] = sorted({k for k in _kernel_names()})
    return report


def _kernel_names() -> list[str]:
    from .runtime import RECORDER

    return list(RECORDER.compiled.keys())


def _large_case(v: Validator, task: Task, specs: list[tuple[str, Any, torch.dtype, float]]) -> list[dict[str, Any]]:
    """Opt-in case whose element offsets pass 2**31, sized from free GPU memory first."""
    if v.device != "cuda":
        v.notes.append("large_offsets skipped: it needs a GPU (the interpreter cannot hold 2**31 elements)")
        return []
    base = next(((n, s, d, sc) for n, s, d, sc in specs if n == "large"), specs[0])
    name, shape, dtype, scale = base
    if not isinstance(shape, (tuple, list)) or not shape:
        v.notes.append("large_offsets skipped: the large case's shape is not a tuple of sizes")
        return []
    numel = math.prod(shape)
    factor = math.ceil((2**31 + 2**20) / max(1, numel))
    big_shape = (shape[0] * factor, *shape[1:])
    meta = Case("large_offsets", big_shape, dtype, "meta", 0)
    try:
        need = _nbytes(task.make_inputs(meta))
    except Exception:  # noqa: BLE001
        need = math.prod(big_shape) * torch.empty((), dtype=dtype).element_size()
    free = torch.cuda.mem_get_info()[0]
    if need * 5 > free:
        v.notes.append(f"large_offsets skipped: needs about {need * 5 / 2**30:.0f} GiB, {free / 2**30:.0f} GiB free")
        return []
    v.emit("progress", message=f"{v.args['candidate_display']}: large_offsets {list(big_shape)}")
    rec = v.run_case(task, "large_offsets", big_shape, dtype, scale, 0, fp64=False)
    torch.cuda.empty_cache()
    return [rec]
