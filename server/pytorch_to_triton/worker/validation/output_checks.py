"""The checks of one case's outputs against the reference: count, shape, dtype and device, values within the case's
tolerance (compare.Tolerance: the declared or default one plus PyTorch's own error at this size), unwritten elements,
two runs that differ, stale results, and outputs so small that the absolute tolerance alone would pass a constant.
Every check of an output asks the one Tolerance the value comparison chose (issue 48)."""

from __future__ import annotations

import math
from typing import Any

import torch

from . import cases
from . import compare as cmp
from . import memory as mem
from .nest import flatten as _flatten
from .poison import FLOAT_POISON_B, INT_OFFSET_B, POISON
from .tasks import Case, Task, clone_inputs, dtype_name


def _as_tensor(x: Any, device: str) -> torch.Tensor:
    return x if isinstance(x, torch.Tensor) else torch.tensor(x, device=device)


SMALL_OUTPUT_FACTOR = 10.0  # max|ref| < 10 * atol: the absolute tolerance alone would pass a constant
SMALL_OUTPUT_MIN_ELEMS = 64


def check_small_outputs(v: OutputChecks, label: str, where: str, out: torch.Tensor, expected: torch.Tensor,
                        tol: cmp.Tolerance, m: dict[str, Any]) -> bool:
    """Outputs so small that atol alone passes a constant: warn, and check the error relative to the outputs'
    own scale (rtol x max|reference|, plus the reference's own error as every comparison allows). Without a float64
    reference there is no such yardstick: only the warning. False on failure."""
    if not out.is_floating_point() or out.numel() < SMALL_OUTPUT_MIN_ELEMS or tol.atol <= 0:
        return True  # a handful of outputs (the single variant) is small by chance, not by the problem's design
    amax = float(m.get("ref_amax") or 0.0)
    if amax >= SMALL_OUTPUT_FACTOR * tol.atol:
        return True
    tight = tol.rtol * amax
    v.find("small_outputs", label, f"{where}: max |reference| is {amax:.3g}, under {SMALL_OUTPUT_FACTOR:g} x atol "
           f"({tol.atol:g}): the absolute tolerance alone would pass a constant; also checked against "
           f"atol={tight:.3g} (rtol x max|reference|)", {"max_abs_reference": amax, "atol": tol.atol,
                                                         "relative_atol": tight}, severity="warn")
    m["small_outputs_atol"] = tight
    if tol.own is None or tight >= tol.atol:
        return True  # no float64 yardstick: a tighter check against the input-dtype reference means nothing
    r = cmp.compare(out, expected, tol.rtol, tight, own=tol.own)
    if not r["ok"]:
        v.find("relative_mismatch", label, f"{where}: {r['mismatches']} of {r['numel']} elements off by more than "
               f"{tight:.3g} (rtol x max|reference|; max abs err {r['max_abs_err']:.3g} against outputs of at most "
               f"{amax:.3g})", {"worst": r["worst"]})
        return False
    return True


def _worst_outside(m: dict[str, Any]) -> str:
    """'; the worst element outside: got 3.1 for 0.2 at [0, 5]' (the largest error overall may sit inside the
    bound, where the outputs are large: Mamba2's 1e10 beside a dropped term's 3)."""
    w = (m.get("worst") or [None])[0]
    if not w:
        return ""
    fmt = lambda v: f"{v:.6g}" if isinstance(v, float) else str(v)
    return f"; the worst element outside: got {fmt(w['got'])} for {fmt(w['expected'])} at {w['index']}"


class OutputChecks:
    """Uses the Validator's state (self.device, self.args, self.case, self.notes) and its methods (find, _reference,
    _candidate, _candidate_error, _harness_oom): a mixin of validate.Validator, never used alone."""

    def _tolerance_note(self, tol: cmp.Tolerance, dtype: torch.dtype, label: str) -> None:
        """One note per dtype and kind, kept at the contract case with the largest own error: the reference's own
        error sets the bound somewhere (undeclared), or a declared atol sits below it (issue 48). Robustness cases
        (|x| ~ 1e4 makes PyTorch's own error exceed atol by design) use the same rule without a note."""
        if getattr(self, "tier", cases.CONTRACT) != cases.CONTRACT:
            return
        name = dtype_name(dtype)
        line = cmp.below_own_error(tol)
        if line is not None:
            key = ("below", name)
            text = f"{name} (case {label}, the largest): {line}"
        elif tol.widened and not tol.declared:
            key = ("own", name)
            assert tol.own is not None
            text = (f"PyTorch's own {name} result is off float64 by up to {tol.own_max:.3g} in case {label} (the "
                    f"largest; outputs up to {tol.own.ref_amax:.3g}), more than atol {tol.atol:g}: each element may be "
                    f"off by {cmp.OWN_FACTOR:g}x PyTorch's own error in its {cmp.OWN_WINDOW}-element window, so a "
                    "candidate as accurate as PyTorch passes (references/tolerances.md)")
        else:
            return
        seen = self.tol_notes.get(key)
        if seen is None:
            self.tol_notes[key] = (tol.own_max, len(self.notes))
            self.notes.append(text)
        elif tol.own_max > seen[0] and seen[1] < len(self.notes):
            self.tol_notes[key] = (tol.own_max, seen[1])
            self.notes[seen[1]] = text

    def _compare_outputs(self, rec: dict[str, Any], label: str, ref_meta: list[tuple[Any, ...]],
                         expected: list[torch.Tensor], own: list[cmp.OwnError | None], a_list: list[Any],
                         b_list: list[Any]) -> bool:
        """Run A against the reference (float64 where there is one) under the case's Tolerance per output, run B
        beside it (unwritten elements, runs that differ); self.tols keeps the tolerances for the later checks."""
        self.tols = []
        if len(a_list) != len(ref_meta):
            self.find("output_count", label, f"{len(a_list)} outputs, the reference returns {len(ref_meta)}")
            return False
        ok = True
        outs = []
        tol_over = self.args.get("tolerances_merged") or {}
        for i, ((r_shape, r_dtype, r_device, r_is_tensor), exp_t, own_i, a, b) in enumerate(
                zip(ref_meta, expected, own, a_list, b_list)):
            a_t, b_t = _as_tensor(a, self.device), _as_tensor(b, self.device)
            where = f"output {i}"
            tol = cmp.tolerance(r_dtype, tol_over, self.case, own_i)
            self.tols.append(tol)
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
            self._tolerance_note(tol, r_dtype, label)
            if tol.widened:
                rec["tolerance_widened"] = True
            if a_t.is_floating_point():
                a_val, b_val = math.nan, FLOAT_POISON_B
            else:
                base = POISON.int_value(a_t.dtype)
                a_val, b_val = base, (base + INT_OFFSET_B if base is not None else None)
            # Run B rides in compare's pass (unwritten + runs that differ: one sync per slice, not three).
            merged = (b_t.shape, b_t.dtype, b_t.device) == (a_t.shape, a_t.dtype, a_t.device)
            m = cmp.compare(a_t, exp_t, tol.rtol, tol.atol, own=tol.own, second=b_t if merged else None,
                            poison=(a_val, b_val))
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
                          f"{tol.describe()}; max abs err {m['max_abs_err']:.3g}{_worst_outside(m)}",
                          {"worst": m["worst"], "first_bad_index": m.get("first_bad_index")})
            if not n_unwritten and not self._runs_agree(label, where, a_t, b_t, m, merged):
                ok = False
            if tol.own is not None:
                m["reference_own_max_abs_err"] = tol.own_max
            if m.get("tail") and m["ok"]:
                self.notes.append(
                    f"case {label}, {where}: {m['tail']} of {m['numel']} elements were past {cmp.OWN_FACTOR:g}x "
                    f"PyTorch's own error in their {cmp.OWN_WINDOW}-element window and within {cmp.OWN_FACTOR:g}x "
                    "that of the window and its two neighbours"
                    + (f" ({m['tail_normwise']} of them past that too, the output's 2-norm error being within "
                       f"{cmp.OWN_FACTOR:g}x PyTorch's own)" if m.get("tail_normwise") else "")
                    + f": rounding's tail at this size, allowed for up to {cmp.tail_allowed(m['numel'])} elements "
                    "(references/tolerances.md)")
            ok = ok and m["ok"] and not n_unwritten
            if getattr(self, "kb_checks", False) and m["ok"] and not n_unwritten:  # KernelBench: tiny outputs
                ok = check_small_outputs(self, label, where, a_t, exp_t, tol, m) and ok
            outs.append({k: m[k] for k in ("max_abs_err", "max_rel_err", "rel_l2_err", "mismatches", "nonfinite",
                                           "unwritten", "worst", "rtol", "atol")})
            if m.get("tail"):
                outs[-1]["tail"] = m["tail"]
            if tol.own is not None:
                outs[-1]["reference_own_max_abs_err"] = tol.own_max
        rec["outputs"] = outs
        for key in ("max_abs_err", "max_rel_err", "rel_l2_err"):
            rec[key] = max((o[key] for o in outs), default=0.0)
        for key in ("mismatches", "nonfinite", "unwritten"):
            rec[key] = sum(o[key] for o in outs)
        rec["worst"] = next((o["worst"] for o in outs if o["worst"]), [])
        return ok

    def _runs_agree(self, label: str, where: str, a_t: torch.Tensor, b_t: torch.Tensor, m: dict[str, Any],
                    merged: bool) -> bool:
        """Two runs on identical inputs: a failure when some element is inside the case's tolerance in one run and
        outside it in the other (the verdict depends on the run: a race); beyond rounding but on the same side of
        the tolerance everywhere, a warning (order-dependent atomics: correct, not reproducible bit for bit)."""
        if merged:
            same, d, flip = m.get("runs_same", True), m.get("runs_max_diff", 0.0), m.get("runs_flip", 0)
        else:  # outputs of another shape or dtype in run B: no element-wise verdicts to set side by side
            same, d = cmp.same_within_rounding(a_t, b_t)
            flip = 0 if same else -1
        if same:
            return True
        if flip:
            count = f"{flip} elements pass in one run and fail in the other" if flip > 0 else "run B differs"
            self.find("nondeterministic", label, f"{where}: two runs on identical inputs differ by up to {d:.3g}, "
                      f"across the case's tolerance ({count}): a race or order-dependent atomics")
            return False
        self.find("nondeterministic", label, f"{where}: two runs on identical inputs differ by up to {d:.3g}, beyond "
                  "rounding but on the same side of the case's tolerance at every element: order-dependent atomics "
                  "(correct, but not reproducible bit for bit)", severity="warn")
        return True

    def _stale_checks(self, task: Task, rec: dict[str, Any], label: str, case: Case, cand_in: list[Any],
                      out_fp: Any, ref_fp: Any, ref_mutates: bool, state: dict[str, Any]) -> bool:
        """Fresh values in the same tensors, and fresh tensors across trials: the output must follow.

        `out_fp` holds one fingerprint per output (cmp.fingerprint of the flat list). Across trials only fingerprints
        are kept (not the outputs): nothing of one case stays allocated. A stale_result says the output did not
        change; an output that changed but misses the reference under the case's tolerance is a mismatch on the new
        values (its evidence says so), never a hint about caching."""
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
        tols = getattr(self, "tols", [])
        for i, (r, c) in enumerate(zip(ref_new, _flatten(out_c))):
            r_t, c_t = _as_tensor(r, self.device), _as_tensor(c, self.device)
            if r_t.shape != c_t.shape:
                continue
            tol = tols[i] if i < len(tols) else cmp.tolerance(r_t.dtype, self.args.get("tolerances_merged"),
                                                             self.case)
            rtol, atol = tol.vs_native()
            m = cmp.compare(c_t, r_t, rtol, atol)
            if m["ok"]:
                continue
            unchanged = isinstance(out_fp, tuple) and i < len(out_fp) and cmp.fingerprint(c_t) == out_fp[i]
            if unchanged:
                self.find("stale_result", label, f"output {i}: new values written into the same input tensors left "
                          "the output unchanged bit for bit while the reference's changed (caching on data_ptr or "
                          "shape?)")
            else:
                self.find("mismatch", f"{label}:new_values", f"output {i}: with new values written into the same "
                          f"input tensors the output changed, but {m['mismatches']} of {m['numel']} elements are "
                          f"outside the case's tolerance against the reference in {dtype_name(r_t.dtype)} (rtol="
                          f"{rtol:g} atol={atol:g}; max abs err {m['max_abs_err']:.3g}): wrong for these values",
                          {"worst": m["worst"], "first_bad_index": m.get("first_bad_index")})
            return False
        return True
