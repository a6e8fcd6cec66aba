"""The warm-path shortcuts of issue 20 (cached memory estimates, one-sync comparisons, the fast patch check) never
reuse a result that a changed file or seed would change, and never hide a finding."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
import torch

from pytorch_to_triton.worker.validation import compare as cmp
from pytorch_to_triton.worker.validation.guards import PatchWatch

TASKS = Path(__file__).parent / "tasks"
REF = '''SHAPES = {{"only": ({n},)}}


def make_inputs(case):
    (n,) = case.shape
    return case.randn(n), case.randn(n)


def reference(x, y):
    return x + y
'''


def _ws(tmp_path: Path, n: int) -> None:
    (tmp_path / "reference.py").write_text(REF.format(n=n))
    (tmp_path / "cand.py").write_text((TASKS / "add_stage1.py").read_text())


# The corpus command: a long cache-invalidation run; the default command keeps a changed reference run again
# (tests/test_ref_cache.py) and a changed candidate seen (test_changed_candidate_is_seen).
@pytest.mark.corpus
def test_changed_reference_is_estimated_again(tmp_path: Path, tmp_service) -> None:
    _ws(tmp_path, 1000)
    first = tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=1, noncontiguous=False)
    assert first.ok, first.summary
    est1 = first.candidates[0].cases[0].mem_estimate_bytes
    time.sleep(0.01)  # a new mtime as well as new content
    _ws(tmp_path, 300_000)
    second = tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=1, noncontiguous=False)
    assert second.ok, second.summary
    case = second.candidates[0].cases[0]
    assert case.shape == [[300_000], [300_000]]
    assert case.mem_estimate_bytes > est1  # the estimate of the new sizes, not the cached one


def test_changed_seed_changes_the_inputs(tmp_path: Path, tmp_service) -> None:
    _ws(tmp_path, 1000)
    a = tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=1, seed=0, noncontiguous=False)
    b = tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=1, seed=1, noncontiguous=False)
    assert a.ok and b.ok
    assert a.candidates[0].cases[0].seed != b.candidates[0].cases[0].seed


def test_changed_candidate_is_seen(tmp_path: Path, tmp_service) -> None:
    _ws(tmp_path, 1000)
    assert tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=1).ok
    src = (tmp_path / "cand.py").read_text().replace("x + y", "x - y")
    assert src != (tmp_path / "cand.py").read_text()
    (tmp_path / "cand.py").write_text(src)
    rep = tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=1)
    assert not rep.ok and rep.candidates[0].findings[0].check == "mismatch"


@pytest.mark.parametrize("n", [1, 4097, 98432])
def test_compare_metrics_unchanged(n: int) -> None:
    g = torch.Generator().manual_seed(n)
    ref = torch.randn(n, generator=g, dtype=torch.float64)
    out = (ref + 1e-5 * torch.randn(n, generator=g, dtype=torch.float64)).float()
    out[0] = math.nan
    if n > 2:
        out[1] = math.inf
        ref[2] = math.inf
        out[2] = math.inf
    one = cmp.compare(out, ref, 1e-4, 1e-4)
    sliced = cmp.compare(out, ref, 1e-4, 1e-4, chunk=max(1, n // 3))
    assert one["mismatches"] == sliced["mismatches"] == (2 if n > 2 else 1)
    assert one["nonfinite"] == sliced["nonfinite"] == (2 if n > 2 else 1)
    assert one["max_abs_err"] == sliced["max_abs_err"] == math.inf
    assert one["rel_l2_err"] == pytest.approx(sliced["rel_l2_err"], rel=1e-12)
    assert one["worst"][0]["index"] == [0] and not one["ok"]
    fin = torch.isfinite(out.double()) & torch.isfinite(ref)
    if not bool(fin.any()):
        return
    want = float(torch.linalg.vector_norm((out.double() - ref)[fin]) / torch.linalg.vector_norm(ref[fin]))
    assert one["rel_l2_err"] == pytest.approx(want, rel=1e-12)


def test_same_bits_and_rounding_one_sync() -> None:
    a = torch.randn(1000)
    b = a.clone()
    assert cmp.same_bits([a, a.int()], [b, b.int()])
    b[999] += 1
    assert not cmp.same_bits([a, a], [a.clone(), b])
    assert not cmp.same_bits([a], [a, a]) and not cmp.same_bits(a, a.double())
    nan = torch.full((3,), math.nan)
    assert cmp.same_bits(nan, nan.clone())
    ok, d = cmp.same_within_rounding(a, b)
    assert not ok and d == pytest.approx(1.0, rel=1e-3)
    assert cmp.fingerprint(a) == cmp.fingerprint(a.clone()) != cmp.fingerprint(b)
    assert cmp.unwritten(torch.tensor([math.nan, 1.0]), torch.tensor([-7777.0, 1.0]), math.nan, -7777.0) == (1, 0)
    ints = torch.tensor([5, -1234567891234567891 + 3])
    assert cmp.unwritten(torch.tensor([5, -1234567891234567891]), ints, -1234567891234567891,
                         -1234567891234567891 + 3) == (1, 1)


def test_patch_watch_fast_path_still_sees_patches() -> None:
    watch = PatchWatch()
    assert watch.check_and_restore() == []
    orig_time, orig_add = time.perf_counter, torch.Tensor.add
    time.perf_counter = lambda: 0.0  # type: ignore[assignment]
    assert watch.check_and_restore() == ["time.perf_counter"] and time.perf_counter is orig_time
    torch.Tensor.add = lambda *a, **k: None  # type: ignore[method-assign]
    assert "torch.Tensor.add" in watch.check_and_restore()
    assert watch.check_and_restore() == []  # restored: the fast path agrees again
    torch.Tensor.allclose = lambda *a, **k: True  # type: ignore[method-assign]  # shadows the C base's method
    try:
        assert "torch.Tensor.allclose" in watch.check_and_restore()
    finally:
        if "allclose" in vars(torch.Tensor):
            del torch.Tensor.allclose
    assert torch.Tensor.add is orig_add


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
@pytest.mark.parametrize("chunk", [None, 7])
def test_compare_with_a_second_run_gives_what_the_separate_passes_give(dtype: torch.dtype, chunk: int | None) -> None:
    # issue 28: unwritten() and same_within_rounding() folded into compare()'s pass must say exactly what they said
    g = torch.Generator().manual_seed(3)
    n = 50
    if dtype.is_floating_point:
        a_val, b_val = math.nan, -7777.0
        a = torch.randn(n, generator=g).to(dtype)
        ref = a.double()
        b = a.clone()
        a[[5, 31]], b[[5, 31]] = a_val, b_val  # never written: poison in both runs
        b[40] += 0.5  # a race: run B differs beyond rounding
        a[44] = b[44] = math.nan  # NaN in both runs is not a difference
    else:
        a_val, b_val = -1234567891234567891, -1234567891234567891 + 3  # int64 poison: exact, no float cast
        a = torch.randint(-5, 5, (n,), generator=g, dtype=dtype)
        ref = a.clone()
        b = a.clone()
        a[[5, 31]], b[[5, 31]] = a_val, b_val
        b[40] += 1
    for second in (b, a.clone()):
        merged = cmp.compare(a, ref, 1e-2, 1e-2, chunk, second=second, poison=(a_val, b_val))
        alone = cmp.compare(a, ref, 1e-2, 1e-2, chunk)
        assert {k: alone[k] for k in alone if k != "worst"} == {k: merged[k] for k in alone if k != "worst"}
        assert (merged["unwritten"], merged["first_unwritten"]) == cmp.unwritten(a, second, a_val, b_val, chunk)
        same, d = cmp.same_within_rounding(a, second, chunk)
        assert merged["runs_same"] == same and merged["runs_max_diff"] == pytest.approx(d)
        if second is b:  # the planted faults are seen
            assert merged["unwritten"] == 2 and merged["first_unwritten"] == 5 and not merged["runs_same"]
    assert merged["unwritten"] == 0 and merged["runs_same"]  # the second loop ran a's own copy
