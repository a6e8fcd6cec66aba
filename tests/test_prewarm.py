"""The worker's start-up work (worker/prewarm.py): every step runs, is timed, and leaves no trace in a report."""

from __future__ import annotations

from pytorch_to_triton.worker.prewarm import process_age_s


def test_process_age_is_seconds_since_this_process_started() -> None:
    age = process_age_s()
    assert age is not None and 0.0 < age < 24 * 3600


def test_a_fresh_worker_reports_its_prewarm_steps_and_no_report_lists_the_prewarm_kernel(service) -> None:
    res = service.pool.call("ping", {}, timeout_s=600)
    startup = res["runtime"]["startup_s"]
    assert not [k for k in startup if k.endswith("error")], startup
    for step in ("dynamo_import_s", "harness_import_s", "triton_launch_s", "compare_ops_s"):
        assert isinstance(startup[step], float) and startup[step] >= 0.0, startup
    assert startup["process_age_ready_s"] >= startup["process_age_at_prewarm_s"]
    rep = service.validate(reference="benchmarks/tasks/vadd_reference.py", candidates=["benchmarks/tasks/vadd_stage1.py"],
                           trials=1)
    cand = rep.candidates[0]
    assert rep.ok, cand.findings
    assert "prewarm_add_kernel" not in str(cand.launched_kernels)
    # each non-empty case launched the candidate's one kernel per run: the prewarm launch was not counted
    assert {c.launches for c in cand.cases if c.launches is not None and c.shape and c.shape[0] != [0]} == {1}
