"""Issue 40: the shrink keeps multiplicity. A repeated size (heads, groups, experts, batch) of 2 stays 2 and one of
3 or more stays >= 3 in every contract case, so a kernel that gives every element of it the first one's offset
fails under the interpreter with the default shrink (tests/multiplicity_corpus, labels.json). Plan-level checks are
fast; the corpus runs through the worker and are marked slow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import corpus_sample

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "multiplicity_corpus"
LABELS: dict[str, dict] = json.loads((CORPUS / "labels.json").read_text())
PROBLEMS = sorted({k.split("/")[0] for k in LABELS})
SAMPLE = ["batch_center"]  # the default command's sample (a batch index); the corpus command runs every problem


def _mod(problem: str):
    from pytorch_to_triton.worker.validation.tasks import load_module

    return load_module(CORPUS / problem / "reference.py", f"ref_{problem}")


def _repeated(problem: str) -> str:
    return next(v["repeated"] for k, v in LABELS.items() if k.startswith(problem + "/") and "repeated" in v)


@pytest.mark.parametrize("problem", PROBLEMS)
def test_every_contract_case_keeps_the_repeated_size_at_3_or_more(problem: str) -> None:
    """Every contract size case but `single` (every size 1 at once, on purpose) keeps the repeated size >= 3, and
    so does each fallback the reference may run instead."""
    from pytorch_to_triton.worker.validation import cases as cs
    from pytorch_to_triton.worker.validation import sizes as sz

    mod = _mod(problem)
    key = _repeated(problem)
    p = cs.plan(mod, "cpu", None, None)
    assert p.defaults[key] >= 3
    checked = 0
    for c in p.cases:
        if c.tier != cs.CONTRACT or c.name.startswith("single"):
            continue
        for option in [c, *c.fallbacks]:
            assert option.sizes[key] >= 3, (c.name, option.sizes)
            assert not sz.below_floor(p.defaults, option.sizes), (c.name, option.sizes)
            checked += 1
    assert checked >= 4


def test_the_head_size_stays_when_the_head_count_cannot_halve() -> None:
    """minGPT: n_head 8 -> 4 halves with n_embd 768 -> 384; 4 -> 2 would go below 3, so both step to 3 and 288:
    the head size stays 96 (the old shrink went on to n_head=1, where `h = bh * 0` passed)."""
    from pytorch_to_triton.worker.validation import cases as cs

    s = cs.plan(_mod("minigpt_block"), "cpu", None, None).main.sizes
    assert s["n_head"] == 3 and s["n_embd"] == 288, s
    assert s["seq_len"] <= s["max_seqlen"]


def test_a_size_of_two_stays_two_and_pins_below_the_floor_are_named() -> None:
    from pytorch_to_triton.worker.validation import cases as cs
    from pytorch_to_triton.worker.validation import sizes as sz

    assert [sz.multiplicity_floor(n) for n in (1, 2, 3, 8)] == [1, 2, 3, 3]
    assert sz.below_floor({"h": 8, "b": 2}, {"h": 2, "b": 2}) == {"h": 3}
    p = cs.plan(_mod("minigpt_block"), "cpu", {"n_head": 1, "n_embd": 96}, None)
    assert p.main.sizes["n_head"] == 1  # the user's pin stays, with a note that says what it hides
    assert any("pin below what the problem repeats (n_head=8)" in n and "n_head=3" in n for n in p.notes), p.notes


def test_the_tiles_case_reaches_two_of_the_candidates_blocks() -> None:
    """Issue 36 item 4: sized from the launches, the tiles case grows the largest tiled size past two blocks (and a
    grouped swizzle's second group), odd for a tail, within TILES_MAX_ELEMS; heads are left alone."""
    from pytorch_to_triton.worker.validation import cases as cs
    from pytorch_to_triton.worker.validation import sizes as sz

    mod = _mod("batch_center")
    p = cs.plan(mod, "cpu", None, None)
    tiles = next(c for c in p.cases if c.name == "tiles")
    note = cs.widen_tiles(mod, p, tiles, [32, 64], None)
    assert tiles.sizes["seq_len"] == 129 and tiles.sizes["dim"] == 129, (tiles.sizes, note)  # 2 x 64 + 1
    assert note.startswith("tiles: ") and "two of the candidate's own blocks" in note
    assert sz.footprint(mod, tiles.sizes)[0] <= cs.TILES_MAX_ELEMS
    grouped = next(c for c in cs.plan(mod, "cpu", None, None).cases if c.name == "tiles")
    cs.widen_tiles(mod, p, grouped, [32], 2)
    assert grouped.sizes["dim"] == 2 * 2 * 32 + 1, grouped.sizes  # two groups of 2 blocks of 32
    none = next(c for c in cs.plan(mod, "cpu", None, None).cases if c.name == "tiles")
    assert "not run" in cs.widen_tiles(mod, p, none, [], None) and none.sizes == {}


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("problem", corpus_sample(PROBLEMS, SAMPLE))
def test_each_bug_fails_and_each_good_stage_passes_with_the_default_shrink(service, problem: str) -> None:
    """No sizes passed: the shrunk main case, the odd and small variants and the tiles case (the default plan's
    contract size cases that a repeated-index bug depends on). The bug fails on the main case itself."""
    names = sorted(k for k in LABELS if k.startswith(problem + "/"))
    rel = CORPUS.relative_to(ROOT) / problem
    rep = service.validate(reference=str(rel / "reference.py"), candidates=[str(rel / Path(n).name) for n in names],
                           trials=1, only_cases=["shrunk", "odd", "small", "tiles"], budget_s=0)
    for name in names:
        label = LABELS[name]
        cand = next(c for c in rep.candidates if c.candidate.endswith(name))
        if label["expect"] == "pass":
            assert cand.ok, f"{name}: {rep.summary}"
            continue
        assert not cand.ok, f"{name} passed: {rep.summary}"
        assert set(label["checks"]) & {f.check for f in cand.findings if f.severity == "fail"}, cand.findings
        main = next(c for c in cand.cases if c.name == "shrunk")
        assert not main.ok, f"{name}: the default shrink's main case passed"
