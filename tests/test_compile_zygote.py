"""compile_zygote.py: a CPU validation's compile child is forked from the worker's zygote, each from a clean state,
and what a candidate's module does in one never reaches the next (real worker, real sandbox)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from pytorch_to_triton import sandbox_host
from pytorch_to_triton.worker_client import Limits

FIX = Path(__file__).parent / "compile_zygote_fixtures"


def _ws(tmp_path: Path, *files: str, helper: str = "helper_constexpr.py") -> None:
    for f in ("reference.py", *files):
        shutil.copy(FIX / f, tmp_path / f)
    shutil.copy(FIX / helper, tmp_path / "helper.py")


def _compile(rep, i: int = 0) -> dict:
    return rep.candidates[i].model_dump()["target_compile"]


def _zygote(svc) -> int:
    slot = svc.pool.slots[0]
    z = slot._zygotes.get(slot.proc.pid)
    assert z, f"the worker named no compile zygote: {slot._zygotes}"
    return z


def test_each_validation_forks_a_child_that_sees_the_files_as_they_are_now(tmp_path: Path, tmp_service) -> None:
    """The second validation's child is forked from the same zygote, yet imports the helper as it is now: a float
    global the GPU compiler refuses is found although the first child had imported a constexpr one."""
    _ws(tmp_path, "candidate.py")
    first = tmp_service.validate(reference="reference.py", candidates=["candidate.py"], trials=1)
    assert first.ok, first.summary
    assert _compile(first)["child"] == "forked" and _compile(first)["rows"][0]["ok"]
    zygote = _zygote(tmp_service)
    shutil.copy(FIX / "helper_float.py", tmp_path / "helper.py")
    second = tmp_service.validate(reference="reference.py", candidates=["candidate.py"], trials=1)
    assert _compile(second)["child"] == "forked" and _zygote(tmp_service) == zygote
    c = second.candidates[0]
    assert not c.ok and any(f.check == "target_compile" and "SCALE" in f.message for f in c.findings), c.findings


@pytest.mark.skipif(not sandbox_host.on_for("cpu", Limits().sandbox)[0], reason="the sandbox is off here")
def test_a_process_the_module_leaves_is_killed_and_the_zygote_kept(tmp_path: Path, tmp_service) -> None:
    _ws(tmp_path, "leaves_a_process.py", "candidate.py")
    rep = tmp_service.validate(reference="reference.py", candidates=["leaves_a_process.py"], trials=1)
    zygote = _zygote(tmp_service)
    worker = tmp_service.pool.slots[0].proc.pid
    for _ in range(50):  # SIGKILLed: gone (or a zombie) within moments
        left = sandbox_host.descendants(worker)
        if left == {zygote}:
            break
        time.sleep(0.1)
    assert left == {zygote}, f"after the call the worker's family is {left}, the zygote {zygote}"
    assert any("the sandbox killed them" in n for n in rep.candidates[0].notes), rep.candidates[0].notes
    assert rep.candidates[0].ok and _compile(rep)["child"] == "forked", rep.summary
    again = tmp_service.validate(reference="reference.py", candidates=["candidate.py"], trials=1)
    assert again.ok and _compile(again)["child"] == "forked", again.summary


def test_a_child_that_dies_is_named_and_the_next_one_forks(tmp_path: Path, tmp_service) -> None:
    _ws(tmp_path, "aborts.py", "candidate.py")
    rep = tmp_service.validate(reference="reference.py", candidates=["aborts.py"], trials=1)
    section = _compile(rep)
    assert any("exited -6 without an answer" in n for n in section["notes"]), section["notes"]
    assert any("not compiled for the target" in n for n in section["notes"]), section["notes"]
    again = tmp_service.validate(reference="reference.py", candidates=["candidate.py"], trials=1)
    assert again.ok and _compile(again)["child"] == "forked" and _compile(again)["rows"][0]["ok"], again.summary

