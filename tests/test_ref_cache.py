"""worker/validation/ref_cache.py: the reference's side of a case reused across calls only for the same reference file and the
same inputs; the candidate's checks run on every call (issue 28)."""

from __future__ import annotations

import time
from pathlib import Path

import torch

from pytorch_to_triton.worker.validation import ref_cache
from pytorch_to_triton.worker.validation.ref_cache import RefSide

TASKS = Path(__file__).parent / "tasks"
REF = '''SHAPES = {{"small": (1000,), "odd": (4097,)}}


def make_inputs(case):
    (n,) = case.shape
    return {inputs}


def reference(x, y):
    return {formula}
'''
SEEDED = "case.randn(n), case.randn(n)"
UNSEEDED = "torch.randn(n).to(case.device, case.dtype), torch.randn(n).to(case.device, case.dtype)"  # global RNG


def _ws(tmp_path: Path, formula: str = "x + y", inputs: str = SEEDED) -> None:
    src = REF.format(formula=formula, inputs=inputs)
    (tmp_path / "reference.py").write_text(("import torch\n\n" if "torch." in src else "") + src)
    (tmp_path / "cand.py").write_text((TASKS / "add_stage1.py").read_text())


def _numbers(rep) -> list[tuple]:
    return [(c.name, c.trial, c.ok, c.max_abs_err, c.mismatches) for c in rep.candidates[0].cases]


def test_a_warm_call_reports_what_the_first_did(tmp_path: Path, tmp_service) -> None:
    _ws(tmp_path)
    first = tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=2)
    second = tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=2)
    assert first.ok and second.ok, second.summary
    assert _numbers(first) == _numbers(second)


def test_a_changed_reference_is_run_again(tmp_path: Path, tmp_service) -> None:
    _ws(tmp_path)
    assert tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=1).ok
    time.sleep(0.01)
    _ws(tmp_path, formula="x + 2 * y")  # same cases, same inputs, other outputs
    rep = tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=1)
    assert not rep.ok and rep.candidates[0].findings[0].check == "mismatch"


def test_inputs_that_change_between_calls_are_never_served_stale(tmp_path: Path, tmp_service) -> None:
    # make_inputs ignores the case's generator: other values on every call, so no entry may match them
    _ws(tmp_path, inputs=UNSEEDED)
    for _ in range(3):
        rep = tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=1, noncontiguous=False)
        assert rep.ok, rep.summary


def _side(n: int) -> RefSide:
    return RefSide([torch.zeros(n, dtype=torch.float64)], [None], [((n,), torch.float32, None, True)], None, False,
                   4 * n)


def test_an_entry_needs_the_same_inputs_and_the_cache_stays_small() -> None:
    ref_cache.clear()
    x = torch.arange(10.0)
    ref_cache.put(("k",), [x, 3], _side(10))
    assert ref_cache.get(("k",), [x.clone(), 3]) is not None
    assert ref_cache.get(("k",), [x.t().contiguous(), 4]) is None  # another scalar: dropped
    assert ref_cache.get(("k",), [x, 3]) is None and ref_cache.held_bytes() == 0
    strided = torch.arange(20.0)[::2]
    ref_cache.put(("s",), [strided], _side(10))
    assert ref_cache.get(("s",), [x]) is None  # same values, other strides
    big = ref_cache.MAX_ENTRY_BYTES // 8 + 1
    ref_cache.put(("big",), [x], _side(big))
    assert ref_cache.get(("big",), [x]) is None  # too big to keep
    n = ref_cache.MAX_ENTRY_BYTES // 8
    for i in range(ref_cache.MAX_BYTES // ref_cache.MAX_ENTRY_BYTES + 3):
        ref_cache.put(("many", i), [x], _side(n))
    assert ref_cache.held_bytes() <= ref_cache.MAX_BYTES
    assert ref_cache.get(("many", 0), [x]) is None and ref_cache.get(("many", 3 + 7), [x]) is not None
    ref_cache.clear()


def test_an_entry_written_into_after_it_was_stored_is_dropped() -> None:
    # A candidate runs in the worker's process: had it found a cached expected tensor and changed it, later
    # candidates would be judged against its values. The entry must still hold what was stored.
    ref_cache.clear()
    x = torch.arange(10.0)
    side = _side(10)
    side.expected[0].copy_(torch.randn(10, dtype=torch.float64))
    ref_cache.put(("k",), [x], side)
    assert ref_cache.get(("k",), [x]) is side
    side.expected[0][3] += 1.0  # what a hostile candidate would do through gc.get_objects()
    assert ref_cache.get(("k",), [x]) is None and ref_cache.held_bytes() == 0
    ref_cache.clear()
