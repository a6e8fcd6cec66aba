"""Error metrics and tolerances: candidate output vs the (float64) reference."""

from __future__ import annotations

import math
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
# peaks at 7.2 slices' worth of them (measured with the RSS high-water mark; same_within_rounding 6.5), so ~0.5
# GiB against tens of GiB for whole 1.6 G-element outputs. 200 slices of a 6.4 GB output cost ~4000 launches.
CHUNK_ELEMS = 1 << 23
CHUNK_TEMPS = 8


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


def widen_for_native(dtype: torch.dtype, overrides: dict[str, Any] | None, rtol: float, atol: float,
                      native_err: float | None) -> tuple[float, float, bool]:
    """(rtol, atol, widened): atol raised to 2x PyTorch's own max abs error vs float64 when that error exceeds
    the default atol and no tolerance was declared for this dtype.

    A candidate exactly as accurate as PyTorch must not fail (a false failure is the worst verdict): an fp32
    matmul with K=8192 is 2.2e-3 off float64 in PyTorch itself (H200, 2026-12-03), 22x the default atol, while
    the bugs we plant (tails, strides, TF32 operands) land 100x further out."""
    explicit = bool(overrides) and str(dtype).removeprefix("torch.") in overrides
    if explicit or native_err is None or not math.isfinite(native_err) or not native_err > atol \
            or not dtype.is_floating_point:
        return rtol, atol, False
    return rtol, 2.0 * float(native_err), True


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


def compare(out: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float, chunk: int | None = None) -> dict[str, Any]:
    """assert_close-style check plus the numbers: max abs/rel error, relative L2, worst indices, non-finite.

    Works over slices of `chunk` elements (CHUNK_ELEMS by default), so its float64 temporaries stay bounded
    (about CHUNK_TEMPS x 8 bytes per element of a slice) whatever the tensors' size; the metrics are the same."""
    shape = tuple(out.shape)
    n = out.numel()
    res: dict[str, Any] = {"numel": n, "rtol": rtol, "atol": atol, "max_abs_err": 0.0, "max_rel_err": 0.0,
                           "rel_l2_err": 0.0, "mismatches": 0, "nonfinite": 0, "worst": []}
    if n == 0:
        res["ok"] = True
        return res
    exact = not (out.is_floating_point() or out.is_complex())
    of, rf = _flat(out), _flat(ref)
    max_abs = max_rel = 0.0
    ref_norms, diff_norms = [], []
    mismatches = nonfinite = 0
    worst: list[tuple[float, int, float | str, float | str]] = []
    first_bad: int | None = None
    for s, e in _slices(n, chunk):
        o = of[s:e].to(ref.device, torch.float64)
        r = rf[s:e].to(torch.float64)
        agree = (torch.isnan(o) & torch.isnan(r)) | (torch.isinf(o) & torch.isinf(r) & (torch.sign(o) == torch.sign(r)))
        diff = (o - r).abs_()
        diff.masked_fill_(agree, 0.0)
        diff.masked_fill_(torch.isnan(diff), float("inf"))
        if exact:
            bad = (o != r) & ~agree
        else:
            bad = ~(diff <= atol + rtol * r.abs()) & ~agree
        rel = diff / r.abs().clamp_min(torch.finfo(torch.float64).tiny)
        rel.masked_fill_(diff == 0, 0.0)
        max_abs = max(max_abs, float(diff.max()))
        max_rel = max(max_rel, float(rel.max()))
        del rel
        finite = torch.isfinite(o) & torch.isfinite(r)
        ref_norms.append(torch.linalg.vector_norm(torch.where(finite, r, 0.0)))
        diff_norms.append(torch.linalg.vector_norm(torch.where(finite, o - r, 0.0)))
        nonfinite += int((~torch.isfinite(o) & torch.isfinite(r)).sum())
        n_bad = int(bad.sum())
        if n_bad:
            mismatches += n_bad
            if first_bad is None:
                first_bad = s + int(torch.nonzero(bad)[0])
            k = min(WORST_K, n_bad)
            score = torch.where(bad, diff, -1.0)
            vals, idx = torch.topk(score, k)
            for v, i in zip(vals.tolist(), idx.tolist()):
                worst.append((v, s + i, _num(o[i]), _num(r[i])))
            worst = sorted(worst, key=lambda w: (-w[0], w[1]))[:WORST_K]
    # The norm of per-slice norms is the norm of the whole (one slice: exactly today's number).
    ref_norm = torch.linalg.vector_norm(torch.stack(ref_norms))
    diff_norm = torch.linalg.vector_norm(torch.stack(diff_norms))
    res["max_abs_err"] = max_abs
    res["max_rel_err"] = max_rel
    res["rel_l2_err"] = float(diff_norm / ref_norm) if float(ref_norm) > 0 else float(diff_norm)
    res["mismatches"] = mismatches
    res["nonfinite"] = nonfinite
    res["ok"] = mismatches == 0
    if mismatches:
        res["worst"] = [{"index": _index(i, shape), "got": got, "expected": exp} for _, i, got, exp in worst]
        res["first_bad_index"] = _index(first_bad or 0, shape)
    return res


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
    sb = torch.tensor(b_value, dtype=b.dtype, device=b.device)
    sa = None if a.is_floating_point() else torch.tensor(a_value, dtype=a.dtype, device=a.device)
    count, first = 0, None
    for s, e in _slices(n, chunk):
        x, y = af[s:e], bf[s:e]
        mask = (torch.isnan(x) if sa is None else x == sa) & (y == sb)
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
        ok = ok and bool((diff <= 16 * eps * (scale + 1.0)).all())
        worst = max(worst, float(diff.max()))
    return ok, worst


def same_bits(a: Any, b: Any, chunk: int | None = None) -> bool:
    """Equal values (NaN equals NaN) and shapes, tensors compared slice by slice; lists and scalars too."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        af, bf = _flat(a), _flat(b.to(a.device))
        for s, e in _slices(a.numel(), chunk):
            x, y = af[s:e], bf[s:e]
            eq = x == y
            if a.is_floating_point():
                eq |= torch.isnan(x) & torch.isnan(y)
            if not bool(eq.all()):
                return False
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_bits(x, y, chunk) for x, y in zip(a, b))
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
            h1 = (h1 + int(x.sum())) % (1 << 64)
            h2 = (h2 + int((x * w).sum())) % (1 << 64)
        return ("tensor", tuple(t.shape), str(t.dtype), h1, h2)
    if isinstance(value, (list, tuple)):
        return tuple(fingerprint(v, chunk) for v in value)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value
