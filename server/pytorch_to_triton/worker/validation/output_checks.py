"""The checks of one case's outputs against the reference: count, shape, dtype and device, values within the
tolerances (widened to PyTorch's own error), unwritten elements, two runs that differ, stale results, and outputs so
small that the absolute tolerance alone would pass a constant."""

from __future__ import annotations

import math
from typing import Any

import torch

from . import compare as cmp
from . import memory as mem
from .nest import flatten as _flatten
from .poison import FLOAT_POISON_B, INT_OFFSET_B, POISON
from .tasks import Case, Task, clone_inputs, dtype_name


def _as_tensor(x: Any, device: str) -> torch.Tensor:
    return x if isinstance(x, torch.Tensor) else torch.tensor(x, device=device)


SMALL_OUTPUT_FACTOR = 10.0  # max|ref| < 10 * atol: the absolute tolerance alone would pass a constant
SMALL_OUTPUT_MIN_ELEMS = 64


def _finite_amax(t: torch.Tensor) -> float:
    """max |t| over its finite elements, in bounded slices (a full-size float64 output must not be copied)."""
    flat, best = t.detach().reshape(-1), 0.0
    step = int(getattr(cmp, "CHUNK_ELEMS", 1 << 24))
    for s in range(0, flat.numel(), step):
        c = flat[s:s + step].abs()
        c = c[torch.isfinite(c)]
        if c.numel():
            best = max(best, float(c.max()))
    return best


def check_small_outputs(v: OutputChecks, label: str, where: str, out: torch.Tensor, expected: torch.Tensor,
                        native_err: float | None, rtol: float, atol: float, m: dict[str, Any]) -> bool:
    """Outputs so small that atol alone passes a constant: warn, and check the error relative to the outputs'
    own scale, allowing 10x PyTorch's own error vs float64 (`native_err`; cancellation can make it large).
    Without a float64 reference there is no such yardstick: only the warning. False on failure."""
    if not out.is_floating_point() or out.numel() < SMALL_OUTPUT_MIN_ELEMS or atol <= 0:
        return True  # a handful of outputs (the single variant) is small by chance, not by the problem's design
    amax = _finite_amax(expected)
    if amax >= SMALL_OUTPUT_FACTOR * atol:
        return True
    tight = max(rtol * amax, 10.0 * (native_err or 0.0))
    v.find("small_outputs", label, f"{where}: max |reference| is {amax:.3g}, under {SMALL_OUTPUT_FACTOR:g} x atol "
           f"({atol:g}): the absolute tolerance alone would pass a constant; also checked against atol={tight:.3g} "
           "(rtol x max|reference|)", {"max_abs_reference": amax, "atol": atol, "relative_atol": tight},
           severity="warn")
    m["small_outputs_atol"] = tight
    if native_err is None or tight >= atol:
        return True  # no float64 yardstick, or PyTorch's own error is that large: a tighter check means nothing
    r = cmp.compare(out, expected, rtol, tight)
    if not r["ok"]:
        v.find("relative_mismatch", label, f"{where}: {r['mismatches']} of {r['numel']} elements off by more than "
               f"{tight:.3g} (rtol x max|reference|; max abs err {r['max_abs_err']:.3g} against outputs of at most "
               f"{amax:.3g})", {"worst": r["worst"]})
        return False
    return True


class OutputChecks:
    """Uses the Validator's state (self.device, self.args, self.case, self.notes) and its methods (find, _reference,
    _candidate, _candidate_error, _harness_oom): a mixin of validate.Validator, never used alone."""

    def _native_note(self, label: str, r_t: torch.Tensor, e_t: torch.Tensor, tol_over: dict[str, Any]) -> float:
        """Max abs error of PyTorch's own result vs float64 (and a note when that is outside the tolerance)."""
        rtol, atol = cmp.tolerance_for(r_t.dtype, tol_over, self.case)
        native = cmp.compare(r_t, e_t, rtol, atol)
        if not native["ok"]:
            explicit = str(r_t.dtype).removeprefix("torch.") in (tol_over or {})
            self.notes.append(f"PyTorch's own {dtype_name(r_t.dtype)} result for {label} is outside the "
                              f"{'declared' if explicit else 'default'} tolerance vs float64 (max abs "
                              f"{native['max_abs_err']:.3g})" + ("" if explicit else
                              f"; atol for this case widened to 2x that ({2 * native['max_abs_err']:.3g}) so a "
                              "candidate as accurate as PyTorch passes. Declare TOLERANCES (or the sidecar's "
                              "[tolerances]) to set it yourself"))
        return native["max_abs_err"]

    def _compare_outputs(self, rec: dict[str, Any], label: str, ref_meta: list[tuple[Any, ...]],
                         expected: list[torch.Tensor], native_err: list[float | None], a_list: list[Any],
                         b_list: list[Any]) -> bool:
        if len(a_list) != len(ref_meta):
            self.find("output_count", label, f"{len(a_list)} outputs, the reference returns {len(ref_meta)}")
            return False
        ok = True
        outs = []
        tol_over = self.args.get("tolerances_merged") or {}
        for i, ((r_shape, r_dtype, r_device, r_is_tensor), exp_t, nerr, a, b) in enumerate(
                zip(ref_meta, expected, native_err, a_list, b_list)):
            a_t, b_t = _as_tensor(a, self.device), _as_tensor(b, self.device)
            where = f"output {i}"
            if tuple(a_t.shape) != r_shape:
                self.find("shape_mismatch", label, f"{where}: shape {list(a_t.shape)}, expected {list(r_shape)}")
                ok = False
                continue
            if a_t.dtype != r_dtype:
                self.find("dtype_mismatch", label, f"{where}: dtype {a_t.dtype}, expected {r_dtype}")
                ok = False
                continue
            if r_is_tensor and a_t.device != r_device:
                self.find("device_mismatch", label, f"{where}: device {a_t.device}, expected {r_device}")
                ok = False
                continue
            rtol, atol = cmp.tolerance_for(r_dtype, tol_over, self.case)
            rtol, atol, widened = cmp.widen_for_native(r_dtype, tol_over, rtol, atol, nerr)
            if widened:
                rec["tolerance_widened"] = True
            if a_t.is_floating_point():
                a_val, b_val = math.nan, FLOAT_POISON_B
            else:
                base = POISON.int_value(a_t.dtype)
                a_val, b_val = base, (base + INT_OFFSET_B if base is not None else None)
            # Run B rides in compare's pass (unwritten + same-within-rounding: one sync per slice, not three).
            merged = (b_t.shape, b_t.dtype, b_t.device) == (a_t.shape, a_t.dtype, a_t.device)
            m = cmp.compare(a_t, exp_t, rtol, atol, second=b_t if merged else None, poison=(a_val, b_val))
            if merged:
                n_unwritten, first_flat = m.get("unwritten", 0), m.get("first_unwritten")
            else:
                n_unwritten, first_flat = cmp.unwritten(a_t, b_t, a_val, b_val)
            m["unwritten"] = n_unwritten
            if n_unwritten:
                first = cmp._index(first_flat or 0, tuple(a_t.shape))
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
                same, d = ((m.get("runs_same", True), m.get("runs_max_diff", 0.0)) if merged
                           else cmp.same_within_rounding(a_t, b_t))
                if not same:
                    self.find("nondeterministic", label, f"{where}: two runs on identical inputs differ by up to "
                              f"{d:.3g} (beyond rounding): a race or order-dependent atomics")
                    ok = False
            if nerr is not None:
                m["reference_native_max_abs_err"] = nerr
            ok = ok and m["ok"] and not n_unwritten
            if getattr(self, "kb_checks", False) and m["ok"] and not n_unwritten:  # KernelBench: tiny outputs
                ok = check_small_outputs(self, label, where, a_t, exp_t, nerr, rtol, atol, m) and ok
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
                      out_fp: Any, ref_fp: Any, ref_mutates: bool, state: dict[str, Any]) -> bool:
        """Fresh values in the same tensors, and fresh tensors across trials: the output must follow.

        Across trials only fingerprints are kept (not the outputs): nothing of one case stays allocated."""
        key = (label, rec["dtype"])
        prev = state.get(key)
        state[key] = (out_fp, ref_fp)
        if prev is not None and prev[0] == out_fp and prev[1] != ref_fp:
            self.find("stale_result", label, "the output equals the previous trial's although the inputs changed")
            return False
        if rec["trial"] != 0:
            return True
        fresh_case = Case(case.name, case.shape, case.dtype, case.device, case.seed + 7_654_321, case.scale)
        fresh = task.make_inputs(fresh_case)
        for dst, src in zip(cand_in, fresh):
            if isinstance(dst, torch.Tensor) and isinstance(src, torch.Tensor) and dst.shape == src.shape:
                dst.copy_(src)  # same objects, same data_ptr, new values
        del fresh
        ref_new = _flatten(self._reference(task.ref_fn, clone_inputs(cand_in) if ref_mutates else cand_in))
        try:
            out_c, _, _ = self._candidate(task.cand_fn, cand_in, math.nan, 0, label)
        except Exception as e:  # noqa: BLE001 - reported by the main runs if it is systematic
            mem.forget(e)
            return True
        for r, c in zip(ref_new, _flatten(out_c)):
            r_t, c_t = _as_tensor(r, self.device), _as_tensor(c, self.device)
            if r_t.shape != c_t.shape:
                continue
            rtol, atol = cmp.tolerance_for(r_t.dtype, self.args.get("tolerances_merged"), self.case)
            if not cmp.compare(c_t, r_t, max(rtol, 1e-3) * 4, max(atol, 1e-3) * 4)["ok"]:
                self.find("stale_result", label, "new values written into the same input tensors did not change "
                          "the output accordingly (caching on data_ptr or shape?)")
                return False
        return True
