"""The dry run at the problem's full size (issue 46): what only the full size shows fails a CPU validation.

Fixtures: tests/dry_run_fixtures (README.md labels each stage). Each is right at every size the interpreter runs;
the BAD ones fail where the GPU would, at the problem's own size, which the interpreter never runs.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import HAS_CUDA

FIX = Path(__file__).parent / "dry_run_fixtures"
no_gpu = pytest.mark.skipif(HAS_CUDA, reason="on a GPU the full size runs for real: no dry run")


def _validate(tmp_path: Path, folder: str, stage: str, main: str = "shrunk", **kw: Any) -> Any:
    """One stage of a fixture folder validated on the CPU (one trial of its main case), its candidate report."""
    from pytorch_to_triton.service import Service

    shutil.copytree(FIX / folder, tmp_path / folder)
    svc = Service(tmp_path, device="cpu")
    try:
        rep = svc.validate(reference=f"{folder}/reference.py", candidates=[f"{folder}/{stage}"], trials=1,
                           only_cases=[main], **kw)
    finally:
        svc.close()
    return rep.candidates[0]


def _finding(cand: Any, check: str) -> Any:
    return next((f for f in cand.findings if f.check == check), None)


@no_gpu
def test_head_size_tiles_fail_on_shared_memory_at_full_size(tmp_path: Path) -> None:
    """Issue 46's MiniGPT case: PASS at the sidecar's small sizes (head size 16) while the H100 refused the launch
    at the problem's head size 96 (OutOfResources: shared memory). The full size's launch is compiled for sm_90."""
    cand = _validate(tmp_path, "minigpt", "stage_head_tiles.py", main="sized")
    f = _finding(cand, "target_resources")
    assert not cand.ok and f is not None and f.severity == "fail", [x.message for x in cand.findings]
    assert "shared memory" in f.message and "at the problem's full size" in f.message and "sm_90" in f.message
    assert "BLOCK_D=128" in f.message  # the full size's tile, not the 16 the interpreter ran
    assert all(c.ok for c in cand.cases)  # every case the interpreter ran passed
    extra = cand.model_dump()
    assert extra["full_size"]["at"]["n_embd"] == 768 and extra["full_size"]["launches"][0]["grid"][1] == 128 * 8


@no_gpu
def test_a_grid_over_65535_in_y_fails_at_full_size(tmp_path: Path) -> None:
    cand = _validate(tmp_path, "grid_y", "stage_rows_on_y.py", target_gpus="none")
    f = _finding(cand, "target_resources")
    assert not cand.ok and f is not None and f.severity == "fail"
    assert "grid dimension y is 100,000, over CUDA's limit of 65,535" in f.message and "batch_size=100000" in f.message
    assert all(c.ok for c in cand.cases)


@no_gpu
def test_an_int32_offset_past_2_31_fails_at_full_size(tmp_path: Path) -> None:
    cand = _validate(tmp_path, "int32", "stage_int32_rows.py", target_gpus="none")
    f = _finding(cand, "int32_offset_overflow")
    assert not cand.ok and f is not None and f.severity == "fail"
    assert "program (65535, 0, 0)" in f.message and "(line 17)" in f.message and "int32" in f.message
    assert f.fix and "int64" in f.fix
    assert all(c.ok for c in cand.cases)


@no_gpu
def test_the_int64_offset_passes_the_full_size_checks(tmp_path: Path) -> None:
    cand = _validate(tmp_path, "int32", "stage_int64_rows.py", target_gpus="none")
    assert _finding(cand, "int32_offset_overflow") is None and _finding(cand, "target_resources") is None
    full = cand.model_dump()["full_size"]
    assert full["ok"] and full["findings"] == [] and full["launches"][0]["grid"] == [65536, 1, 1]


@no_gpu
def test_a_wrapper_that_reads_values_gets_a_note_not_a_crash(tmp_path: Path) -> None:
    cand = _validate(tmp_path, "value_branch", "stage_reads_values.py", target_gpus="none")
    assert cand.ok, [f.message for f in cand.findings]
    full = cand.model_dump()["full_size"]
    assert full["ok"] is False and "reads tensor values on the host" in full["fallback"]
    note = next(n for n in cand.model_dump()["notes"] if n.startswith("full-size checks not run"))
    assert "the launches of the sizes validated below stand in" in note


# ---- the pieces -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stage", ["stage_sleeps.py", "stage_hoards.py"])
def test_a_call_that_never_ends_on_fake_tensors_is_stopped_at_the_time_limit(stage: str) -> None:
    """tests/faults/memory_blowup.py looped on fake tensors until the call's timeout, before any case ran: the dry
    run's calls are bounded (SIGALRM on the main thread: the sleep; OpLog's deadline in any thread: a loop of torch
    ops, through the loop's own `except Exception`), and the fallback says which side was stopped and why."""
    import signal
    import threading
    import time

    import torch

    from pytorch_to_triton.worker.device.runtime import RECORDER
    from pytorch_to_triton.worker.validation import dry_run
    from pytorch_to_triton.worker.validation.loader import load_task

    task = load_task(FIX / "endless" / "reference.py", FIX / "endless" / stage, None, None, "cpu")
    at = {"batch_size": 64, "dim": 32}
    handler = signal.getsignal(signal.SIGALRM)
    threads = [False] + ([True] if stage == "stage_hoards.py" else [])  # a sleep in a thread: no signal reaches it
    for in_thread in threads:
        out: list[Any] = []
        t0 = time.perf_counter()

        def call(out: list[Any] = out) -> None:
            out.append(dry_run.run(task, at, torch.float32, "cpu", "test", budget_s=1.0))

        if in_thread:
            th = threading.Thread(target=call)
            th.start()
            th.join(30)
        else:
            call()
        took = time.perf_counter() - t0
        assert out and took < 10, (in_thread, took)
        dry = out[0]
        assert not dry.ok and dry.fallback.startswith("the candidate was still running on fake tensors after 1 s")
        assert dry.ref_flops is not None and dry.ref_error is None  # the reference ran: its figures are kept
        assert RECORDER.dry is None and signal.getsignal(signal.SIGALRM) == handler  # nothing left armed


def test_a_stopped_dry_run_leaves_nothing_behind_in_the_worker() -> None:
    """The time limit's SIGALRM can land between a `with` block's __enter__ and its body, where __exit__ never runs:
    an OpLog left on the dispatch stack made every later torch op of the process raise DryRunTimeout (CI, 2026-12-07:
    30 tests after one stopped dry run; without the fix 4 of these 60 stops leaked). Stops at many points of the
    call: after each, no dispatch mode, grad on, no recorder, and torch computes."""
    import torch
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack

    from pytorch_to_triton.worker.device.runtime import RECORDER
    from pytorch_to_triton.worker.validation import dry_run
    from pytorch_to_triton.worker.validation.loader import load_task

    task = load_task(FIX / "endless" / "reference.py", FIX / "endless" / "stage_hoards.py", None, None, "cpu")
    for i in range(60):
        budget = 0.002 + 0.003 * (i % 10)  # 2-29 ms: the alarm lands at a different place of the call each time
        dry = dry_run.run(task, {"batch_size": 64, "dim": 32}, torch.float32, "cpu", "test", budget_s=budget)
        assert dry.fallback, (i, budget)
        assert not _get_current_dispatch_mode_stack() and torch.is_grad_enabled() and RECORDER.dry is None, (i, budget)
        assert torch.ones(2).add(1).tolist() == [2.0, 2.0]


def test_the_program_lattice_weighs_every_program_once() -> None:
    from pytorch_to_triton.worker.device.interp_sample import lattice

    for grid, cap in (((1000, 1, 1), 16), ((16, 11, 1), 16), ((37, 5, 3), 8), ((7, 1, 1), 1), ((2, 3, 4), 64)):
        plan = lattice(grid, cap)
        assert len(plan) <= max(cap, 1) and plan[0][0] == tuple(n - 1 for n in grid)  # the last program first
        assert sum(w for _, w, _ in plan) == pytest.approx(grid[0] * grid[1] * grid[2])
        assert sum(c for _, _, c in plan) == pytest.approx(grid[0] * grid[1] * grid[2])  # the coarse weights too
    # linear work in the program id (causal attention): the interior's three points give its mean exactly, and so
    # does the middle program alone (the coarse sum): no sampling error; quadratic work shows one
    plan = lattice((1000, 1, 1), 16)
    assert sum(w * (x + 1) for (x, _, _), w, _ in plan) == pytest.approx(sum(range(1, 1001)))
    assert sum(c * (x + 1) for (x, _, _), _, c in plan) == pytest.approx(sum(range(1, 1001)))
    fine = sum(w * x * x for (x, _, _), w, _ in plan)
    assert abs(fine - sum(c * x * x for (x, _, _), _, c in plan)) / fine > 0.1


def test_grid_limits_and_view_extents() -> None:
    from pytorch_to_triton.worker.device import dry_launch
    from pytorch_to_triton.worker.device.launch_specs import LaunchSpec

    spec = LaunchSpec("k", "k", "m", "f.py", [])
    la = dry_launch.DryLaunch(None, "k", "k", "f.py", {}, (2**31, 65536, 1), {}, spec)
    assert dry_launch.grid_findings(la) == ["grid dimension x is 2,147,483,648, over CUDA's limit of 2,147,483,647",
                                            "grid dimension y is 65,536, over CUDA's limit of 65,535"]
    t = dry_launch.TensorArg("float32", (4, 3), (12, 1), 4, 0, 192, 4)  # the k of q, k, v = qkv.split(4, dim=1)
    assert t.extent_bytes() == (3 * 12 + 2 + 1) * 4
