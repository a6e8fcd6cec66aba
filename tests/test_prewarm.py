"""The worker's start-up work (worker/prewarm.py): every step runs, is timed, and leaves no trace in a report."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import pythonpath

from pytorch_to_triton.worker.prewarm import process_age_s

ROOT = Path(__file__).resolve().parent.parent


def test_process_age_is_seconds_since_this_process_started() -> None:
    age = process_age_s()
    assert age is not None and 0.0 < age < 24 * 3600


def test_a_fresh_worker_reports_its_prewarm_steps_and_no_report_lists_the_prewarm_kernel(service) -> None:
    res = service.pool.call("ping", {}, timeout_s=600)
    startup = res["runtime"]["startup_s"]
    assert not [k for k in startup if k.endswith("error")], startup
    for step in ("harness_import_s", "triton_launch_s", "compare_ops_s"):
        assert isinstance(startup[step], float) and startup[step] >= 0.0, startup
    assert startup["process_age_ready_s"] >= startup["process_age_at_prewarm_s"]
    rep = service.validate(reference="benchmarks/tasks/vadd_reference.py", candidates=["benchmarks/tasks/vadd_stage1.py"],
                           trials=1)
    cand = rep.candidates[0]
    assert rep.ok, cand.findings
    assert "prewarm_add_kernel" not in str(cand.launched_kernels)
    # each non-empty case launched the candidate's one kernel per run: the prewarm launch was not counted
    assert {c.launches for c in cand.cases if c.launches is not None and c.shape and c.shape[0] != [0]} == {1}


def test_first_validation_of_a_fresh_worker_does_not_import_dynamo_which_comes_once_it_is_idle(tmp_path: Path) -> None:
    """Issue 28: torch._dynamo (3.9 s of the H200 worker's start-up) is off the start-up and, on a GPU, off the first
    call's path: the memory estimate of a small make_inputs case and the op recorder do without it (under the
    interpreter, issue 46's dry run on fake tensors imports it); the worker imports it after answering, and the
    import is no patch of a candidate's."""
    from pytorch_to_triton.service import Service
    from pytorch_to_triton.worker_client import Limits

    for name in ("vadd_reference.py", "vadd_stage1.py"):
        shutil.copy(ROOT / "benchmarks" / "tasks" / name, tmp_path / name)
    svc = Service(tmp_path, limits=Limits(spare=False))
    try:
        ping = svc.pool.call("ping", {}, timeout_s=600)
        assert "dynamo_import_s" not in ping["runtime"]["startup_s"]
        assert ping["runtime"]["dynamo_loaded"] is False
        res = svc.pool.call("validate", {"workspace": str(tmp_path), "reference": str(tmp_path / "vadd_reference.py"),
                                         "candidate": str(tmp_path / "vadd_stage1.py"), "candidate_display": "c",
                                         "trials": 1, "seed": 0, "tolerances": {}, "cases": []}, timeout_s=600)
        assert res["ok"], res["findings"]
        full = res.get("full_size")
        if full is None:  # a GPU: no dry run, the whole validation ran without it
            assert res["runtime"]["dynamo_loaded"] is False
        else:  # the interpreter's dry run at full size (issue 46) needs FakeTensorMode, whose constructor imports
            # torch._dynamo.config, so the whole torch._dynamo package (1.7-1.8 s on the dev CPU): the first CPU
            # validation pays it there, the worker's start-up (the ping above) still does not
            assert full["ok"] and res["runtime"]["dynamo_loaded"] is True, full
        assert all(c.get("mem_estimate_bytes") for c in res["cases"] if "variant" not in c and ":" not in c["name"])
        deadline = time.monotonic() + 120
        while True:  # the worker imports it once it has been idle a moment
            time.sleep(1.0)
            rt = svc.pool.call("ping", {}, timeout_s=600)["runtime"]
            if rt["dynamo_loaded"] or time.monotonic() > deadline:
                break
        assert rt["dynamo_loaded"], rt["startup_s"]
        assert rt["startup_s"]["dynamo_import_idle_s"] > 0 and "dynamo_import_patched" not in rt["startup_s"]
        rep = svc.validate(reference="vadd_reference.py", candidates=["vadd_stage1.py"], trials=1)
        assert rep.ok and not [f for f in rep.candidates[0].findings if f.check == "timer_patched"], rep.summary
    finally:
        svc.close()


_NO_DYNAMO = """
import sys
from pytorch_to_triton.worker.validation import poison
from pytorch_to_triton.worker.validation.guards import PatchWatch, guarded_call
from pytorch_to_triton.worker.device.runtime import setup
import torch
rt = setup()
poison.install()
with guarded_call(None, PatchWatch()) as ev:
    torch.randn(8) + torch.randn(8)
assert ev.compute_ops == {"add": 1}, ev.compute_ops
assert "torch._dynamo" not in sys.modules
"""


def test_op_recorder_works_without_importing_dynamo() -> None:
    # torch wraps every TorchDispatchMode's __torch_dispatch__ in torch._disable_dynamo, whose first call imports
    # torch._dynamo; the op recorder does that only once dynamo is loaded (guards.OpRecorder)
    env = {"PYTHONPATH": pythonpath(), "TRITON_INTERPRET": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", _NO_DYNAMO], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]


def test_op_recorder_with_dynamo_loaded_records_the_same() -> None:
    import torch
    import torch._dynamo  # noqa: F401

    from pytorch_to_triton.worker.validation.guards import PatchWatch, guarded_call

    with guarded_call(None, PatchWatch()) as ev:
        torch.randn(8) @ torch.randn(8, 2)
    assert ev.heavy_ops and ev.compute_ops


@pytest.mark.parametrize("dynamo", [False, True])
def test_small_case_estimate_is_deferred_only_without_dynamo_and_equals_the_fake_one(tmp_path: Path, monkeypatch,
                                                                                    dynamo: bool) -> None:
    """The estimate a deferred case gets from its real sizes is the one fake tensors give."""
    from pytorch_to_triton.worker.device.runtime import setup
    from pytorch_to_triton.worker.validation import memory as mem
    from pytorch_to_triton.worker.validation import validate
    from pytorch_to_triton.worker.validation.guards import PatchWatch
    from pytorch_to_triton.worker.validation.run_validation import validate_candidate

    monkeypatch.setattr(mem, "dynamo_loaded", lambda: dynamo)
    monkeypatch.setattr(validate, "_ESTIMATES", {})
    fake_calls: list[int] = []
    orig = validate.Validator._estimate_now
    monkeypatch.setattr(validate.Validator, "_estimate_now",
                        lambda self, task, case: fake_calls.append(1) or orig(self, task, case))
    for name in ("vadd_reference.py", "vadd_stage1.py"):
        shutil.copy(ROOT / "benchmarks" / "tasks" / name, tmp_path / name)
    rt = setup()
    rep = validate_candidate({"workspace": str(tmp_path), "reference": str(tmp_path / "vadd_reference.py"),
                              "candidate": str(tmp_path / "vadd_stage1.py"), "candidate_display": "c", "trials": 1,
                              "seed": 0, "tolerances": {}, "cases": [], "noncontiguous": False},
                             rt, lambda *a, **k: None, PatchWatch())
    assert rep["ok"], rep["findings"]
    got = {c["name"]: c["mem_estimate_bytes"] for c in rep["cases"]}
    assert bool(fake_calls) == dynamo  # fake tensors only where dynamo is loaded
    i = 98432 * 4 * 2  # medium: two fp32 inputs, one fp32 output
    want = mem.Estimate(i, i // 2, 2 * i, i, interpreter=rt.interpreter).need(True)
    assert got["medium"] == want
