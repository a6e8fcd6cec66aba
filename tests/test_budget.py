"""The time budget of a CPU validation (worker/validation/budget.py, issue 40): an estimate up front from the first trial,
cases that would not fit left out and named, the main case never."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_to_triton.worker.validation import budget

ROOT = Path(__file__).resolve().parent.parent
FIX = "tests/kernelbench_fixtures"


def test_predictions_follow_the_observed_rate_and_drop_what_does_not_fit() -> None:
    b = budget.Budget(10.0)
    assert b.predict(100.0, 1) is None and b.fits(1e12, 3)  # nothing observed: nothing is dropped blind
    b.observe(100.0, 1, 1.0)  # 0.01 s per unit
    assert abs(b.predict(200.0, 3) - 0.01 * 200 * 3 * budget.SLACK) < 1e-9
    assert b.fits(1000.0, 1)  # one weight seen: its time may be warm-up, nothing is dropped on it yet
    b.observe(300.0, 1, 3.0)
    assert b.fits(100.0, 1) and not b.fits(1000.0, 1)
    b.drop("long_dim", 1000.0, 1)
    assert b.note() is not None and "long_dim (about 12 s)" in b.note() and "--budget" in b.note()
    line = b.plan_line([("odd", 100.0, 1, False), ("long_dim", 5000.0, 1, False), ("mine", 5000.0, 1, True)])
    assert "budget 10 s" in line and "(long_dim)" in line and "mine" not in line.split("left out")[1]
    none = budget.Budget(None)
    none.observe(1.0, 1, 100.0)
    assert none.fits(1e9, 9) and none.note() is None and "budget" not in none.plan_line([("a", 1.0, 1, False)])


def test_the_up_front_estimate_is_settled_with_what_really_happened() -> None:
    """Issue 40's trial: a report said long_height and long_width "will be left out" though both ran and passed."""
    b = budget.Budget(10.0)
    b.observe(100.0, 1, 1.0)
    b.observe(300.0, 1, 3.0)
    notes = ["c.py: " + b.plan_line([("long_height", 5000.0, 1, False), ("long_width", 5000.0, 1, False)]), "other"]
    assert "will be left out (long_height, long_width)" in notes[0]
    b.drop("long_width float16", 5000.0, 1)  # the case ran for one dtype, then the time ran out
    b.settle(notes)
    assert notes[0].endswith("[the estimate at the start; in the end 1 left out, and long_height ran after all]")
    assert notes[1] == "other"
    b.settle(notes)  # settled once
    assert notes[0].count("[the estimate at the start") == 1
    quiet = budget.Budget(10.0)
    kept = ["c.py: estimate: about 3 s for all cases: all fit"]
    quiet.settle(kept)
    assert kept == ["c.py: estimate: about 3 s for all cases: all fit"]


def test_an_estimate_over_the_budget_never_says_all_fit() -> None:
    """Issue 49's friction: "about 163 s ... budget 120 s: all fit". Cases that are never left out (the main case,
    the user's own) can carry the total over the budget: the line says by how much, not "all fit"."""
    b = budget.Budget(120.0)
    b.observe(100.0, 1, 1.0)
    b.observe(300.0, 1, 3.0)  # 0.01 s per unit of weight, no fixed cost
    required = b.plan_line([("mine", 10000.0, 1, True), ("main", 3000.0, 1, True)])  # ~162 s, both required
    assert "budget 120 s" in required and "all fit" not in required, required
    assert "s over it" in required and "never left out" in required, required
    assert "will be left out" not in required and b.planned_out == []
    fits = b.plan_line([("mine", 1000.0, 1, True)])  # ~12 s: inside the budget
    assert fits.endswith("budget 120 s: all fit"), fits
    dropped = b.plan_line([("odd", 20000.0, 1, False)])
    assert "will be left out (odd)" in dropped and "over it" not in dropped


def test_a_fixed_cost_per_run_is_told_apart_from_the_work() -> None:
    """A first small case that is all warm-up must not make a bigger one look 1000x as long: once two weights are
    seen, time = a + r * weight (the first run left out when three or more are there)."""
    b = budget.Budget(100.0)
    for w, t in [(1e3, 5.0), (1e3, 1.0), (1e5, 1.5), (1e6, 6.0)]:
        b.observe(w, 1, t)
    a, r = b.model()
    assert 0.9 < a < 1.1 and 4e-6 < r < 6e-6, (a, r)
    assert b.predict(1e6, 1) < 10 and b.fits(1e6, 3)


def test_the_budget_comes_from_the_call_else_two_minutes_on_the_cpu_and_none_on_a_gpu() -> None:
    assert budget.from_args({}, "cpu").seconds == budget.DEFAULT_CPU_S == 120.0
    assert budget.from_args({}, "cuda").seconds is None
    assert budget.from_args({"budget_s": 300}, "cpu").seconds == 300.0
    assert budget.from_args({"budget_s": 0}, "cpu").seconds is None  # 0 = no budget


def test_the_weight_grows_with_the_work_of_the_case() -> None:
    """Elements plus the reference's FLOPs / FLOPS_PER_ELEM, on fake tensors: an attention's T x T shows."""
    from pytorch_to_triton.worker.validation.tasks import load_module

    mod = load_module(ROOT / "tests/multiplicity_corpus/minigpt_block/reference.py", "ref_budget")
    base = {"batch_size": 2, "seq_len": 8, "n_embd": 96, "n_head": 3, "max_seqlen": 64}
    w1, w2 = budget.work(mod, base), budget.work(mod, {**base, "seq_len": 64})
    assert w1 and w2 and w2 > 8 * w1  # more than the elements' 8x: the attention's T x T


def test_a_small_budget_leaves_cases_out_and_says_so_up_front(service) -> None:
    events: list[str] = []
    rep = service.validate(reference=f"{FIX}/affine_reference.py", candidates=[f"{FIX}/affine_good.py"], trials=2,
                           budget_s=0.5, on_event=lambda m, p, t: events.append(m))
    cand = rep.candidates[0]
    assert cand.ok, rep.summary
    names = [c.name for c in cand.cases]
    assert names[0] == "shrunk" and names.count("shrunk") == 2  # the main case always runs, every trial
    assert "tiles" in names, names  # the one case past the candidate's blocks is never left out
    assert any(n.startswith("time budget: tiles kept") for n in cand.notes), cand.notes
    estimate = next(m for m in events if "estimate: about" in m)
    assert "budget 0 s" in estimate or "budget 1 s" in estimate, estimate
    assert events.index(estimate) < len(events) - 1  # said before the remaining cases ran
    note = next(n for n in cand.notes if n.startswith("time budget") and "left out" in n)
    assert "left out" in note and "budget_s" in note, note
    assert "--budget 0.5" in rep.reproduce


TASKS = ROOT / "tests" / "tasks"
ADD_2D = (TASKS / "add_reference.py").read_text().replace(
    'SHAPES = {"small": (1000,), "edge_empty": (0,), "odd_7": (7,)}',
    'SHAPES = {"small": (40, 25), "edge_empty": (0, 3), "odd_7": (7, 5)}').replace(
    "(n,) = case.shape\n    return case.randn(n), case.randn(n)", "return case.randn(*case.shape), case.randn(*case.shape)")


@pytest.mark.parametrize("dims", [1, 2])
def test_progress_counts_every_case_run_and_ends_at_its_total(tmp_service, tmp_path: Path, dims: int) -> None:
    """Issue 49's friction: progress printed "[39/38]": the x1e4 case ran uncounted, and the interpreter's in-launch
    events added a fraction to the last case. Every run is counted now (the trials, x1e4, each layout variant: one for
    a 1-D problem, two for a 2-D one), each event counts the runs finished before it, and none reaches the total."""
    (tmp_path / "reference.py").write_text(ADD_2D if dims == 2 else (TASKS / "add_reference.py").read_text())
    (tmp_path / "stage1.py").write_text((TASKS / "add_stage1.py").read_text())
    if dims == 2:
        assert "(40, 25)" in ADD_2D and "randn(*case.shape)" in ADD_2D
    seen: list[tuple[float, float, str]] = []
    rep = tmp_service.validate(reference="reference.py", candidates=["stage1.py"], trials=2,
                               on_event=lambda m, p, t: seen.append((p, t, m)) if p is not None and t else None)
    assert rep.ok, rep.summary
    runs = len(rep.candidates[0].cases)
    # each case's event says how many runs finished before it; the interpreter's in-launch events add a fraction; the
    # total falls when a run will not happen (here a layout a 1-D input cannot take) and ends at the runs made
    assert seen and all(p < t for p, t, _ in seen) and seen[-1][1] == runs, (runs, seen)
    starts = [p for p, _, m in seen if " programs" not in m and "estimate:" not in m]
    assert starts == list(range(runs)), (starts, [c.name for c in rep.candidates[0].cases])
