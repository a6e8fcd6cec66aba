"""Error metrics and tolerances: candidate output vs the (float64) reference."""

from __future__ import annotations

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


def _index(flat: int, shape: tuple[int, ...]) -> list[int]:
    idx = []
    for dim in reversed(shape):
        idx.append(flat % dim if dim else 0)
        flat //= dim if dim else 1
    return list(reversed(idx))


def compare(out: torch.Tensor, ref: torch.Tensor, rtol: float, atol: float) -> dict[str, Any]:
    """assert_close-style check plus the numbers: max abs/rel error, relative L2, worst indices, non-finite."""
    shape = tuple(out.shape)
    n = out.numel()
    res: dict[str, Any] = {"numel": n, "rtol": rtol, "atol": atol, "max_abs_err": 0.0, "max_rel_err": 0.0,
                           "rel_l2_err": 0.0, "mismatches": 0, "nonfinite": 0, "worst": []}
    if n == 0:
        res["ok"] = True
        return res
    exact = not (out.is_floating_point() or out.is_complex())
    o = out.detach().to(ref.device, torch.float64).reshape(-1)
    r = ref.detach().to(torch.float64).reshape(-1)
    both_nan = torch.isnan(o) & torch.isnan(r)
    same_inf = torch.isinf(o) & torch.isinf(r) & (torch.sign(o) == torch.sign(r))
    agree = both_nan | same_inf
    diff = (o - r).abs()
    diff = torch.where(agree, torch.zeros_like(diff), diff)
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    if exact:
        bad = (o != r) & ~agree
    else:
        bad = ~(diff <= atol + rtol * r.abs()) & ~agree
    rel = diff / r.abs().clamp_min(torch.finfo(torch.float64).tiny)
    rel = torch.where(diff == 0, torch.zeros_like(rel), rel)
    finite = torch.isfinite(o) & torch.isfinite(r)
    ref_norm = torch.linalg.vector_norm(torch.where(finite, r, torch.zeros_like(r)))
    diff_norm = torch.linalg.vector_norm(torch.where(finite, o - r, torch.zeros_like(r)))
    res["max_abs_err"] = float(diff.max())
    res["max_rel_err"] = float(rel.max())
    res["rel_l2_err"] = float(diff_norm / ref_norm) if float(ref_norm) > 0 else float(diff_norm)
    res["mismatches"] = int(bad.sum())
    res["nonfinite"] = int((~torch.isfinite(o) & torch.isfinite(r)).sum())
    res["ok"] = res["mismatches"] == 0
    if res["mismatches"]:
        k = min(WORST_K, res["mismatches"])
        score = torch.where(bad, diff, torch.full_like(diff, -1.0))
        top = torch.topk(score, k).indices.tolist()
        res["worst"] = [
            {"index": _index(i, shape), "got": _num(o[i]), "expected": _num(r[i])} for i in top
        ]
        res["first_bad_index"] = _index(int(torch.nonzero(bad)[0]), shape)
    return res


def _num(x: torch.Tensor) -> float | str:
    v = float(x)
    return v if v == v and abs(v) != float("inf") else str(v)


def poison_mask(a: torch.Tensor, b: torch.Tensor, a_value: float | int | None, b_value: float | int | None) -> torch.Tensor:
    """Positions still holding the poison in both runs (run A's poison in A, run B's in B): unwritten."""
    if a.numel() == 0 or b_value is None or a_value is None:
        return torch.zeros(a.shape, dtype=torch.bool, device=a.device)
    sb = torch.tensor(b_value, dtype=b.dtype, device=b.device)
    if a.is_floating_point():
        return torch.isnan(a) & (b == sb)
    sa = torch.tensor(a_value, dtype=a.dtype, device=a.device)
    return (a == sa) & (b == sb)


def same_within_rounding(a: torch.Tensor, b: torch.Tensor) -> tuple[bool, float]:
    """Two runs of the same kernel on the same inputs: equal up to a few ulps (atomics reorder sums)."""
    if a.numel() == 0:
        return True, 0.0
    if not a.is_floating_point():
        return bool(torch.equal(a, b)), float((a != b).sum())
    eps = torch.finfo(a.dtype).eps
    ad, bd = a.double(), b.double()
    agree = (torch.isnan(ad) & torch.isnan(bd)) | (ad == bd)
    diff = torch.where(agree, torch.zeros_like(ad), (ad - bd).abs())
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    scale = torch.maximum(ad.abs(), bd.abs()).nan_to_num(0.0)
    ok = diff <= 16 * eps * (scale + 1.0)
    return bool(ok.all()), float(diff.max())
