"""Error metrics and tolerances: candidate output vs the (float64) reference."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch

# (rtol, atol) against a float64 reference; the reasons are in references/tolerances.md.
DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-4),
    "tf32": (1e-2, 1e-2),
    "float16": (1e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    "float64": (1e-7, 1e-7),
}
WORST_K = 5
# Comparisons run over slices of this many elements: 8 Mi float64 temporaries are 64 MiB each, and compare()
# peaks at 7.4 slices' worth of them alone, 8.5 with a second run and the own-error windows (measured with the RSS
# high-water mark, CPU, 2026-12-07; same_within_rounding 6.5), so ~0.6 GiB against tens of GiB for whole
# 1.6 G-element outputs. 200 slices of a 6.4 GB output cost ~4000 launches.
CHUNK_ELEMS = 1 << 23
CHUNK_TEMPS = 9


def merged_tolerances(ref_mod: Any, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """The reference's TOLERANCES (keys without "torch."), then the call's overrides on top."""
    merged = {str(k).removeprefix("torch."): v for k, v in (getattr(ref_mod, "TOLERANCES", None) or {}).items()}
    merged.update(overrides or {})
    return merged


def tolerance_for(dtype: torch.dtype, overrides: dict[str, Any] | None, case: Any = None) -> tuple[float, float]:
    """(rtol, atol) for an output dtype: per-call override, then the reference's TOLERANCES, then defaults.

    A TOLERANCES entry may be a function of the case (`lambda case: (rtol, atol)`), for errors that grow with a
    size, e.g. a long fp32 prefix sum."""
    name = str(dtype).removeprefix("torch.")
    if overrides and name in overrides:
        v = overrides[name]
        if callable(v):
            v = v(case)
        if isinstance(v, str):
            return DEFAULT_TOLERANCES[v]
        if isinstance(v, dict):
            return float(v["rtol"]), float(v["atol"])
        return float(v[0]), float(v[1])
    if not dtype.is_floating_point:
        return 0.0, 0.0
    return DEFAULT_TOLERANCES.get(name, DEFAULT_TOLERANCES["float32"])


# The reference's own error (issue 48). PyTorch's result in the input dtype is off float64 by some amount at every
# element; a candidate may be off by OWN_FACTOR times that, on top of the declared or default (rtol, atol). The
# yardstick is local: the largest own error in each window of OWN_WINDOW consecutive output elements, not the one
# global maximum. Why both numbers (KernelBench L3 48_Mamba2ReturnY, outputs 1e2..5e21 in one tensor, CPU, torch
# 2.13, 2026-12-07; references/tolerances.md has the table):
# - global: PyTorch's own max error was 2.9e15 at 256x128x8x64; as one atol it passes anything below that at the
#   98 % of elements under 1e4, and a stage that drops the diagonal term (off by ~5 at elements of ~100) passed.
# - elementwise (|cand - ref64| <= c |ref32 - ref64|): two fp32 orders of summation err at different elements, so
#   where PyTorch happens to be exact a correct candidate fails whatever c is.
# - a window of 64: over 16.8 M elements and three sizes the worst (|cand - ref64| - base) / own error of its window
#   was 1.35 for an fp32 Triton-style algorithm (cumsum, exp, dots; 1.15-1.35 at 64, 1.3-2.1 at 16, 0.9-1.0 at
#   1024), so OWN_FACTOR 4 leaves 3x; the dropped diagonal term is off by 1e5 x the own error of its window.
OWN_WINDOW = 64
OWN_FACTOR = 4.0
# The tail (issue 48, H100 2026-12-07: a correct fp32 Mamba2 stage at 2048x128x8x64 had 15 of 134,217,728 elements
# past 4x their window's own error). A window's own error is the largest of 64 draws, a noisy yardstick: over
# millions of windows a few fall low (the max of 64 half-normal draws is below 1.3 sigma once in a million windows)
# while the candidate's largest error over 1e8 elements reaches about 5.7 sigma, so an implementation exactly as
# accurate as PyTorch's puts a handful of elements past 4x at that size. The max over a window and its two
# neighbours (192 draws) is not below 1.9 sigma in 1e12 windows, so 4x of it holds the tail. Only a few elements may
# lean on the neighbours: at most one in TAIL_PER elements (at least one) of the output; past that count each is a
# mismatch as before, so a bug of many elements (the dropped diagonal: 1e8 of them at 1e5x) fails as it did.
# The neighbours' yardstick did not hold it all on the H100 (2026-12-08, torch 2.11, Triton 3.6): the same stage had
# 10 elements past it (got 5.34151e7 for 5.3368e7: errors come from cancellation, whose size varies element by
# element, so the max of PyTorch's nearby errors can sit low at one). Those few then pass by a norm, as numerical
# analysis bounds an algorithm's error: when the output's |cand - ref64|_2 is within OWN_FACTOR x PyTorch's own
# |ref32 - ref64|_2, each is within OWN_FACTOR x the output's largest own error, and together with the neighbours'
# tail they stay within tail_allowed.
TAIL_PER = 1 << 20


@dataclass
class OwnError:
    """The input-dtype reference's own error vs float64 for one output: its largest absolute error in each window of
    OWN_WINDOW consecutive (flat) elements, where both are finite (an fp32 overflow is no licence to err)."""

    windows: torch.Tensor  # float64, one per window, on the output's device
    max: float  # the largest of them
    ref_amax: float  # max |float64 reference| over its finite elements (the outputs' scale, for the notes)
    l2: float = 0.0  # |ref32 - ref64|_2 over the elements where both are finite (the tail's normwise yardstick)

    def slice(self, s: int, e: int, near: bool = False) -> torch.Tensor:
        """The windows of flat elements s..e (s a multiple of OWN_WINDOW); `near`: each the largest of it and its
        two neighbours (the tail's yardstick)."""
        w = self.near if near else self.windows
        return w[s // OWN_WINDOW:-(-e // OWN_WINDOW)]

    @property
    def near(self) -> torch.Tensor:
        if getattr(self, "_near", None) is None:
            w = self.windows[None, None]
            self._near = torch.nn.functional.max_pool1d(w, 3, stride=1, padding=1)[0, 0] if w.numel() > 1 else \
                self.windows
        return self._near


def tail_allowed(numel: int) -> int:
    """How many elements of an output of `numel` may pass by their neighbours' own error (TAIL_PER)."""
    return max(1, numel // TAIL_PER)


def own_error(native: torch.Tensor, ref64: torch.Tensor, chunk: int | None = None) -> OwnError | None:
    """PyTorch's own error per window of OWN_WINDOW elements (None when the output is not floating or empty)."""
    if not native.is_floating_point() or native.numel() == 0 or native.shape != ref64.shape:
        return None
    nf, rf = _flat(native), _flat(ref64)
    parts, amax, sq = [], [], []
    for s, e in _slices(native.numel(), chunk):
        o, r = nf[s:e].to(rf.device, torch.float64), rf[s:e].to(torch.float64)
        d = (o - r).abs_()
        d.masked_fill_(~torch.isfinite(d), 0.0)  # overflow or NaN on either side: no allowance from it
        sq.append(torch.linalg.vector_norm(d) ** 2)
        pad = (-d.numel()) % OWN_WINDOW
        if pad:
            d = torch.nn.functional.pad(d, (0, pad))
        parts.append(d.view(-1, OWN_WINDOW).amax(1))
        amax.append(torch.where(torch.isfinite(r), r.abs(), 0.0).max())
    windows = torch.cat(parts)
    top, ref_amax, l2sq = torch.stack([windows.max(), torch.stack(amax).max(), torch.stack(sq).sum()]).tolist()
    return OwnError(windows, top, ref_amax, math.sqrt(l2sq))


@dataclass
class Tolerance:
    """The one tolerance of a case's output: every check of it (values, second run, stale result, NaN/inf variant,
    gradients) asks this object. An element passes when |out - ref64| <= atol + rtol |ref64| + OWN_FACTOR x the
    reference's own error in its window: the declared (or default) tolerance is an addition, never a ceiling."""

    rtol: float
    atol: float
    declared: bool = False  # the reference's TOLERANCES, the sidecar or the call named this dtype
    own: OwnError | None = None

    @property
    def own_max(self) -> float:
        return self.own.max if self.own is not None else 0.0

    @property
    def widened(self) -> bool:
        """The reference's own error, not (rtol, atol), sets the bound somewhere: worth a note."""
        return OWN_FACTOR * self.own_max > self.atol

    def vs_native(self, loose: float = 2.0) -> tuple[float, float]:
        """(rtol, atol) for a comparison against the reference in the input dtype, on other inputs of the same case
        (the stale check, the NaN/inf variant, run_benchmark's recheck): |out - ref| <= |out - ref64| + |ref64 - ref|,
        both bounded by the largest own error, and `loose` for the other draw."""
        return self.rtol * loose, (self.atol + (OWN_FACTOR + 1.0) * self.own_max) * loose

    def describe(self) -> str:
        """'rtol=0.0001 atol=0.0001' and, where the own error counts, '+ 4x PyTorch's own error (up to 3.5e+09)'."""
        text = f"rtol={self.rtol:g} atol={self.atol:g}"
        if self.own is not None and self.own_max > 0:
            text += f" + {OWN_FACTOR:g}x PyTorch's own error in each {OWN_WINDOW}-element window (up to {self.own_max:.3g})"
        return text


def tolerance(dtype: torch.dtype, overrides: dict[str, Any] | None, case: Any = None,
              own: OwnError | None = None) -> Tolerance:
    """The case's tolerance for an output of `dtype`: tolerance_for's (rtol, atol) plus the reference's own error."""
    rtol, atol = tolerance_for(dtype, overrides, case)
    declared = bool(overrides) and str(dtype).removeprefix("torch.") in overrides
    return Tolerance(rtol, atol, declared, own if dtype.is_floating_point else None)


def below_own_error(tol: Tolerance) -> str | None:
    """One line when a declared atol sits below the reference's own error at this size, with a relative form."""
    if not tol.declared or tol.own is None or not tol.own_max > tol.atol:
        return None
    rel = f", {tol.own_max / tol.own.ref_amax:.1e} of max|reference|" if tol.own.ref_amax > 0 else ""
    return (f"declared atol {tol.atol:g} is below PyTorch's own error vs float64 at this size (up to "
            f"{tol.own_max:.3g}{rel}): the declared tolerance is added to {OWN_FACTOR:g}x that error, not a "
            "ceiling; a fixed atol does not follow the size, so for a margin beyond PyTorch's own error declare it "
            "relative (rtol, per element) or declare none")


def _index(flat: int, shape: tuple[int, ...]) -> list[int]:
    idx = []
    for dim in reversed(shape):
        idx.append(flat % dim if dim else 0)
        flat //= dim if dim else 1
    return list(reversed(idx))


def _slices(n: int, chunk: int | None) -> list[tuple[int, int]]:
    step = max(1, int(chunk or CHUNK_ELEMS))
    return [(s, min(n, s + step)) for s in range(0, n, step)]


def _flat(t: torch.Tensor) -> torch.Tensor:
    # A view when the layout allows (no copy); a non-contiguous output is copied once in its own dtype.
    return t.detach().reshape(-1)


def _add_own(tol: torch.Tensor, windows: torch.Tensor) -> None:
    """tol (one slice, starting at a window boundary) += OWN_FACTOR x its windows' own error, in place."""
    full = tol.numel() // OWN_WINDOW * OWN_WINDOW
    if full:
        tol[:full].view(-1, OWN_WINDOW).add_(windows[:full // OWN_WINDOW, None], alpha=OWN_FACTOR)
    if full < tol.numel():
        tol[full:].add_(windows[-1], alpha=OWN_FACTOR)


def compare(out: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float, chunk: int | None = None, *,
            own: OwnError | None = None, second: torch.Tensor | None = None,
            poison: tuple[Any, Any] | None = None) -> dict[str, Any]:
    """assert_close-style check plus the numbers: max abs/rel error, relative L2, worst indices, non-finite.

    With `own` (the reference's own error, own_error()) an element's bound is atol + rtol |ref| + OWN_FACTOR x the
    own error of its window (Tolerance). With `second` (a second run of the candidate on the same inputs, `out`'s
    shape and dtype) the same pass also gives what unwritten() and same_within_rounding() would: `unwritten` /
    `first_unwritten` (positions holding `poison` = (run A's value, run B's value) in both runs), `runs_same` /
    `runs_max_diff`, and `runs_flip`: elements inside the bound in one run and outside it in the other. The slice's
    other numbers come back in its one device-to-host copy (three syncs per output became one: issue 28).

    Works over slices of `chunk` elements (CHUNK_ELEMS by default), so its float64 temporaries stay bounded
    (about CHUNK_TEMPS x 8 bytes per element of a slice) whatever the tensors' size; the metrics are the same.
    Each slice's numbers come back in one device-to-host copy: per-number float()/int() synchronized the
    GPU 6-8 times per output, about 1.4 ms of a 16-case vector-add validation's 22 ms of comparing (H200)."""
    shape = tuple(out.shape)
    n = out.numel()
    res: dict[str, Any] = {"numel": n, "rtol": rtol, "atol": atol, "max_abs_err": 0.0, "max_rel_err": 0.0,
                           "rel_l2_err": 0.0, "mismatches": 0, "nonfinite": 0, "worst": [], "ref_amax": 0.0}
    if n == 0:
        res["ok"] = True
        return res
    exact = not (out.is_floating_point() or out.is_complex())
    of, rf = _flat(out), _flat(ref)
    max_abs = max_rel = ref_amax = 0.0
    ref_sq = diff_sq = 0.0
    ref_norm1 = diff_norm1 = 0.0
    mismatches = nonfinite = 0
    worst: list[tuple[float, int, float | str, float | str]] = []
    tail_worst: list[tuple[float, int, float | str, float | str]] = []
    first_bad: int | None = None
    first_tail: int | None = None
    tail = far = 0
    # The own error's windows must start at slice starts: slices of a multiple of OWN_WINDOW
    step = max(OWN_WINDOW, int(chunk or CHUNK_ELEMS) // OWN_WINDOW * OWN_WINDOW) if own is not None else chunk
    slices = _slices(n, step)
    runs = _RunsPass(out, second, poison) if second is not None else None
    for s, e in slices:
        o = of[s:e].to(ref.device, torch.float64)
        r = rf[s:e].to(torch.float64)
        # Run B's pass, the element's bound and run B's verdict under it, then run A's: each pass's temporaries
        # go before the next one's are made (the peak stays at about 7.5 slices of float64).
        extra = runs.slice_stats(s, e, o) if runs is not None else []
        bound = None if exact else r.abs().mul_(rtol).add_(atol)
        if bound is not None and own is not None:
            _add_own(bound, own.slice(s, e))
        if runs is not None:
            runs.verdict(r, bound)
        # Equal values (equal infinities included) or both NaN: no error. (o == r) also covers equal finite
        # values, whose difference is 0 anyway, so the metrics are those of the NaN/inf-only rule.
        agree = (o == r).logical_or_(torch.isnan(o).logical_and_(torch.isnan(r)))
        diff = (o - r).abs_()
        diff.masked_fill_(agree, 0.0)
        diff.masked_fill_(torch.isnan(diff), float("inf"))
        if bound is None:
            bad = (o != r).logical_and_(agree.logical_not())
        else:
            bad = (diff <= bound).logical_not_().logical_and_(agree.logical_not())
        del bound, agree
        if runs is not None:
            extra.append(runs.flips(bad))
        r_abs = r.abs()
        r_fin = torch.isfinite(r)
        amax = torch.where(r_fin, r_abs, 0.0).max()
        rel = diff / r_abs.clamp_min_(torch.finfo(torch.float64).tiny)
        rel.masked_fill_(diff == 0, 0.0)
        o_fin = torch.isfinite(o)
        finite = o_fin & r_fin
        stats = torch.stack([
            diff.max(), rel.max(),
            torch.linalg.vector_norm(torch.where(finite, r, 0.0)),
            torch.linalg.vector_norm(torch.where(finite, o - r, 0.0)),
            o_fin.logical_not_().logical_and_(r_fin).sum().to(torch.float64),
            bad.sum().to(torch.float64),
            amax,
            *extra,
        ]).tolist()  # the one host sync of the slice
        if runs is not None:
            runs.take(stats[7:], s)
        del rel, finite, o_fin, r_fin
        max_abs, max_rel, ref_amax = max(max_abs, stats[0]), max(max_rel, stats[1]), max(ref_amax, stats[6])
        ref_norm1, diff_norm1 = stats[2], stats[3]
        ref_sq += stats[2] ** 2
        diff_sq += stats[3] ** 2
        nonfinite += int(stats[4])
        n_bad = int(stats[5])
        if n_bad and own is not None:  # the tail: elements within 4x their neighbours' own error (TAIL_PER)
            near = r.abs().mul_(rtol).add_(atol)
            _add_own(near, own.slice(s, e, near=True))
            near = bad & (diff <= near)
            n_near = int(near.sum())
            if n_near:
                tail += n_near
                tail_worst = _worst(tail_worst, near, diff, o, r, s, n_near)
                if first_tail is None:
                    first_tail = s + int(torch.nonzero(near)[0])
                bad &= near.logical_not_()
                n_bad -= n_near
            del near
        if n_bad and own is not None:  # past the output's largest own error too: never rounding's tail
            far += int((diff > r.abs().mul_(rtol).add_(atol + OWN_FACTOR * own.max)).logical_and_(bad).sum())
        if n_bad:
            mismatches += n_bad
            if first_bad is None:
                first_bad = s + int(torch.nonzero(bad)[0])
            worst = _worst(worst, bad, diff, o, r, s, n_bad)
    # One slice: the norms as computed; several: the norm of the per-slice norms is the norm of the whole.
    ref_norm, diff_norm = (ref_norm1, diff_norm1) if len(slices) == 1 else (math.sqrt(ref_sq), math.sqrt(diff_sq))
    res["max_abs_err"] = max_abs
    res["max_rel_err"] = max_rel
    res["rel_l2_err"] = diff_norm / ref_norm if ref_norm > 0 else diff_norm
    if (mismatches and own is not None and own.l2 > 0 and tail + mismatches <= tail_allowed(n) and not far
            and not nonfinite and diff_norm <= OWN_FACTOR * own.l2):  # a few past their neighbours too (TAIL_PER)
        res["tail_normwise"] = mismatches
        tail += mismatches  # within tail_allowed: nothing below reads their worst or first index
        mismatches, worst, first_bad = 0, [], None
    if tail and tail > tail_allowed(n):  # too many to be rounding's tail: each is a mismatch
        mismatches += tail
        worst = sorted(worst + tail_worst, key=lambda w: (-w[0], w[1]))[:WORST_K]
        first_bad = min(x for x in (first_bad, first_tail) if x is not None)
    elif tail:
        res["tail"] = tail  # passed by their neighbours' own error (TAIL_PER): the case's notes say so
    res["mismatches"] = mismatches
    res["nonfinite"] = nonfinite
    res["ref_amax"] = ref_amax
    res["ok"] = mismatches == 0
    if runs is not None:
        res.update(runs.result())
    if mismatches:
        res["worst"] = [{"index": _index(i, shape), "got": got, "expected": exp} for _, i, got, exp in worst]
        res["first_bad_index"] = _index(first_bad or 0, shape)
    return res


def _worst(worst: list, bad: torch.Tensor, diff: torch.Tensor, o: torch.Tensor, r: torch.Tensor, s: int,
           n_bad: int) -> list:
    """`worst` with the slice's largest errors among `bad` merged in (WORST_K kept)."""
    vals, idx = torch.topk(torch.where(bad, diff, -1.0), min(WORST_K, n_bad))
    worst = worst + [(v, s + i, _num(o[i]), _num(r[i])) for v, i in zip(vals.tolist(), idx.tolist())]
    return sorted(worst, key=lambda w: (-w[0], w[1]))[:WORST_K]


class _RunsPass:
    """unwritten() and same_within_rounding() of two runs, slice by slice inside compare()'s pass: the same
    formulas (see those functions), their numbers stacked with compare's for one sync per slice; and the elements
    whose verdict (inside the case's bound or not) differs between the runs."""

    def __init__(self, a: torch.Tensor, b: torch.Tensor, poison: tuple[Any, Any] | None):
        self.a, self.b = _flat(a), _flat(b)
        self.floating = a.is_floating_point()
        self.a_val, self.b_val = poison if poison is not None else (None, None)
        self.eps = torch.finfo(a.dtype).eps if self.floating else 0.0
        self.unwritten = 0
        self.first: int | None = None
        self.same, self.worst, self.flip = True, 0.0, 0
        self._mask: torch.Tensor | None = None
        self._b_bad: torch.Tensor | None = None
        self._bd: torch.Tensor | None = None

    def slice_stats(self, s: int, e: int, o: torch.Tensor) -> list[torch.Tensor]:
        """0-dim float64 tensors: unwritten count, within-rounding flag, largest difference (or unequal count).
        Keeps run B's slice in float64 for verdict()."""
        x, y = self.a[s:e], self.b[s:e]
        if self.a_val is None or self.b_val is None:
            self._mask, count = None, torch.zeros((), dtype=torch.float64, device=o.device)
        else:  # compared in the tensors' own dtype (int64 poison does not survive a float64 cast)
            self._mask = (torch.isnan(x) if self.floating else x == self.a_val) & (y == self.b_val)
            count = self._mask.sum().to(o.device, torch.float64)
        self._bd = bd = y.to(o.device, torch.float64)
        if not self.floating:
            neq = (x != y).sum().to(o.device, torch.float64)
            return [count, (neq == 0).to(torch.float64), neq]
        agree = (torch.isnan(o) & torch.isnan(bd)) | (o == bd)
        diff = (o - bd).abs_()
        diff.masked_fill_(agree, 0.0)
        diff.masked_fill_(torch.isnan(diff), float("inf"))
        scale = bd.abs()
        torch.maximum(scale, o.abs(), out=scale)
        within = (diff <= scale.nan_to_num_(0.0).add_(1.0).mul_(16 * self.eps)).all().to(torch.float64)
        return [count, within, diff.max()]

    def verdict(self, r: torch.Tensor, bound: torch.Tensor | None) -> None:
        """Run B's verdict per element: outside `bound` around `r` (exact: unequal), as compare's `bad` is run A's."""
        bd, self._bd = self._bd, None
        assert bd is not None
        if bound is None:
            self._b_bad = bd != r
            return
        b_bad = ((bd - r).abs_() <= bound).logical_not_()  # a NaN difference is outside
        self._b_bad = b_bad.logical_and_(((torch.isnan(bd) & torch.isnan(r)) | (bd == r)).logical_not_())

    def flips(self, bad: torch.Tensor) -> torch.Tensor:
        """Elements inside the bound in one run and outside it in the other (run A's `bad` against run B's)."""
        flip, self._b_bad = (self._b_bad ^ bad).sum().to(torch.float64), None
        return flip

    def take(self, stats: list[float], s: int) -> None:
        """Fold one slice's numbers (after the sync)."""
        count = int(stats[0])
        if count and self.first is None and self._mask is not None:
            self.first = s + int(torch.nonzero(self._mask)[0])
        self.unwritten += count
        self.same = self.same and bool(stats[1])
        self.worst = self.worst + stats[2] if not self.floating else max(self.worst, stats[2])
        self.flip += int(stats[3])

    def result(self) -> dict[str, Any]:
        return {"unwritten": self.unwritten, "first_unwritten": self.first, "runs_same": self.same,
                "runs_max_diff": self.worst, "runs_flip": self.flip}


def _num(x: torch.Tensor) -> float | str:
    v = float(x)
    return v if v == v and abs(v) != float("inf") else str(v)


def unwritten(a: torch.Tensor, b: torch.Tensor, a_value: float | int | None, b_value: float | int | None,
              chunk: int | None = None) -> tuple[int, int | None]:
    """(count, first flat index) of positions still holding the poison in both runs (A's in A, B's in B)."""
    n = a.numel()
    if n == 0 or b_value is None or a_value is None:
        return 0, None
    af, bf = _flat(a), _flat(b)
    # Python scalars, compared in the tensors' own dtype (as torch.tensor(value, dtype=...) would round them),
    # without a host-to-device copy per call.
    count, first = 0, None
    for s, e in _slices(n, chunk):
        x, y = af[s:e], bf[s:e]
        mask = (torch.isnan(x) if a.is_floating_point() else x == a_value) & (y == b_value)
        c = int(mask.sum())
        if c and first is None:
            first = s + int(torch.nonzero(mask)[0])
        count += c
    return count, first


def same_within_rounding(a: torch.Tensor, b: torch.Tensor, chunk: int | None = None) -> tuple[bool, float]:
    """Two runs of the same kernel on the same inputs: equal up to a few ulps (atomics reorder sums)."""
    if a.numel() == 0:
        return True, 0.0
    if not a.is_floating_point():
        return bool(torch.equal(a, b)), float((a != b).sum())
    eps = torch.finfo(a.dtype).eps
    af, bf = _flat(a), _flat(b)
    ok, worst = True, 0.0
    for s, e in _slices(a.numel(), chunk):
        ad, bd = af[s:e].double(), bf[s:e].double()
        agree = (torch.isnan(ad) & torch.isnan(bd)) | (ad == bd)
        diff = (ad - bd).abs_()
        diff.masked_fill_(agree, 0.0)
        diff.masked_fill_(torch.isnan(diff), float("inf"))
        scale = torch.maximum(ad.abs(), bd.abs()).nan_to_num(0.0)
        within, d_max = torch.stack([(diff <= 16 * eps * (scale + 1.0)).all().double(), diff.max()]).tolist()
        ok = ok and bool(within)
        worst = max(worst, d_max)
    return ok, worst


def same_bits(a: Any, b: Any, chunk: int | None = None) -> bool:
    """Equal values (NaN equals NaN) and shapes, tensors compared slice by slice; lists and scalars too.

    The per-slice verdicts stay on the device and come back in one copy per device (not one sync per tensor)."""
    pending: list[torch.Tensor] = []
    if not _same_bits(a, b, chunk, pending):
        return False
    by_device: dict[torch.device, list[torch.Tensor]] = {}
    for t in pending:
        by_device.setdefault(t.device, []).append(t)
    return all(bool(torch.stack(ts).all()) for ts in by_device.values())


def _same_bits(a: Any, b: Any, chunk: int | None, pending: list[torch.Tensor]) -> bool:
    """False when shapes, dtypes or scalars differ; tensor verdicts are appended to `pending` (0-dim bools)."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        af, bf = _flat(a), _flat(b.to(a.device))
        for s, e in _slices(a.numel(), chunk):
            x, y = af[s:e], bf[s:e]
            eq = x == y
            if a.is_floating_point():
                eq |= torch.isnan(x) & torch.isnan(y)
            pending.append(eq.all())
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_bits(x, y, chunk, pending) for x, y in zip(a, b))
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


_INT_OF_SIZE = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def fingerprint(value: Any, chunk: int | None = None) -> Any:
    """A small stand-in for a value: equal values give equal fingerprints, different ones almost surely differ.

    Lets the cross-trial stale check remember outputs without keeping them (two 64-bit position-weighted
    sums of the raw bits; NaNs with different payloads differ, which can only hide a finding, never invent one)."""
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.is_complex() or t.element_size() not in _INT_OF_SIZE:
            return ("tensor", tuple(t.shape), str(t.dtype), float(t.abs().sum()) if t.numel() else 0.0)
        bits = _flat(t.view(torch.uint8) if t.dtype == torch.bool else t.view(_INT_OF_SIZE[t.element_size()]))
        h1 = h2 = 0
        for s, e in _slices(bits.numel(), chunk):
            x = bits[s:e].to(torch.int64)
            w = torch.arange(s, e, device=x.device, dtype=torch.int64).mul_(0x9E3779B97F4A7C15 - (1 << 64)).add_(1)
            s1, s2 = torch.stack([x.sum(), (x * w).sum()]).tolist()  # one sync for both sums
            h1 = (h1 + s1) % (1 << 64)
            h2 = (h2 + s2) % (1 << 64)
        return ("tensor", tuple(t.shape), str(t.dtype), h1, h2)
    if isinstance(value, (list, tuple)):
        return tuple(fingerprint(v, chunk) for v in value)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value
