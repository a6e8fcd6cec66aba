"""The run journal: appended per tool call, atomic, rendered as a stage-by-stage table (CLI and service)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import pythonpath

from pytorch_to_triton import journal
from pytorch_to_triton.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
TASKS = Path(__file__).parent / "tasks"


def test_task_id_is_the_folder_of_a_reference(tmp_path: Path) -> None:
    ref = tmp_path / "examples" / "softmax" / "reference.py"
    assert journal.task_id(ref, tmp_path) == "examples-softmax"
    assert journal.task_id(tmp_path / "my op.py", tmp_path) == "my-op"


def test_append_and_render(tmp_path: Path) -> None:
    journal.append_entry(tmp_path, "t", {"tool": "run_validation", "stage": "stage1.py", "ok": True})
    journal.append_entry(tmp_path, "t", {"tool": "run_validation", "stage": "stage2.py", "ok": False})
    journal.append_entry(tmp_path, "t", {"tool": "run_benchmark", "stage": "stage1.py", "median_ms": 0.0681,
                                         "speedup_vs_eager": 3.1, "speedup_vs_compile": 1.6, "pct_peak_bw": 91.5,
                                         "plot": "p.png"})
    journal.append_entry(tmp_path, "t", {"tool": "audit_kernel", "stage": "stage1.py",
                                         "audit_counts": {"P0": 0, "P1": 2, "P2": 1}})
    lines = (journal.journal_dir(tmp_path) / "t.jsonl").read_text().splitlines()
    assert len(lines) == 4 and all(json.loads(x) for x in lines)
    md = journal.render_report(tmp_path, "t")
    row1 = next(x for x in md.splitlines() if x.startswith("| stage1.py"))
    assert "PASS" in row1 and "0.0681" in row1 and "3.10×" in row1 and "91.5%" in row1 and "P1 2" in row1
    row2 = next(x for x in md.splitlines() if x.startswith("| stage2.py"))
    assert "FAIL" in row2
    assert "![benchmark plot](p.png)" in md
    assert journal.list_tasks(tmp_path) == ["t"]


def test_bad_task_names_are_refused(tmp_path: Path) -> None:
    for bad in ("../x", "a/b", "", ".hidden"):
        with pytest.raises(UsageError):
            journal.append_entry(tmp_path, bad, {})
    with pytest.raises(UsageError, match="no journal"):
        journal.render_report(tmp_path, "missing")


def test_a_killed_writer_leaves_the_previous_journal(tmp_path: Path) -> None:
    journal.append_entry(tmp_path, "t", {"tool": "run_validation", "stage": "s.py", "ok": True})
    before = (journal.journal_dir(tmp_path) / "t.jsonl").read_bytes()
    code = ("import os, sys; sys.path.insert(0, sys.argv[2]); from pytorch_to_triton import workspace as w\n"
            "orig = os.replace\n"
            "def boom(*a, **k): os._exit(9)\n"
            "w.os.replace = boom\n"
            "from pytorch_to_triton import journal\n"
            "journal.append_entry(sys.argv[1], 't', {'tool': 'x', 'stage': 'big', 'pad': 'y' * 10**6})\n")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path), str(ROOT / "server")], timeout=60)
    assert r.returncode == 9
    assert (journal.journal_dir(tmp_path) / "t.jsonl").read_bytes() == before


def test_entries_are_keyed_to_content_and_go_stale(tmp_path: Path) -> None:
    ref, cand, side = tmp_path / "t" / "reference.py", tmp_path / "t" / "stage1.py", tmp_path / "t" / "reference.p2t.toml"
    ref.parent.mkdir()
    ref.write_text("v1")
    cand.write_text("good")
    key = journal.content_key(tmp_path, [ref, cand, side])
    assert key["files"]["t/reference.p2t.toml"] is None and len(key["key"]) == 64  # absent, and recorded so
    assert set(key["files"]) == {"t/reference.py", "t/stage1.py", "t/reference.p2t.toml"}
    journal.append_entry(tmp_path, "t", {"tool": "run_validation", "stage": "stage1.py", "ok": True,
                                         "reference": "t/reference.py", **key})
    assert "PASS" in journal.render_report(tmp_path, "t") and "stale" not in journal.render_report(tmp_path, "t")
    cand.write_text("an unvalidated rewrite")
    md = journal.render_report(tmp_path, "t")
    assert "| stage1.py | PASS **stale** (stage1.py changed)" in md and "run the tool again" in md
    bad = journal.content_key(tmp_path, [ref, cand, side])
    journal.append_entry(tmp_path, "t", {"tool": "run_validation", "stage": "stage1.py", "ok": False,
                                         "reference": "t/reference.py", **bad})
    assert "| stage1.py | FAIL |" in journal.render_report(tmp_path, "t")
    cand.write_text("good")  # back to the validated content: the older PASS describes the file again
    assert "| stage1.py | PASS |" in journal.render_report(tmp_path, "t")
    side.write_text('notes = "rows are contiguous"\n')  # a whole-file key: a new sidecar changes the key
    md = journal.render_report(tmp_path, "t")
    assert "| stage1.py | FAIL **stale** (reference.p2t.toml added, stage1.py changed)" in md and "> rows are contiguous" in md
    ref.unlink()
    assert "reference.py deleted" in journal.render_report(tmp_path, "t")


def test_find_reference_of_a_task_folder(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "reference.py").write_text("")
    assert journal.find_reference(tmp_path / "a" / "stage3.py") == (tmp_path / "a" / "reference.py").resolve()
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "19_ReLU.py").write_text("")
    assert journal.find_reference(tmp_path / "kb" / "19_ReLU_stage1.py") is None  # no sidecar: no guess
    (tmp_path / "kb" / "19_ReLU.p2t.toml").write_text("")
    assert journal.find_reference(tmp_path / "kb" / "19_ReLU_stage1.py").name == "19_ReLU.py"
    (tmp_path / "kb" / "20_GELU.py").write_text("")
    (tmp_path / "kb" / "20_GELU.p2t.toml").write_text("")
    assert journal.find_reference(tmp_path / "kb" / "x.py") is None  # two tasks in one folder: ambiguous


def test_service_calls_feed_the_journal_and_cli_report(tmp_path: Path, tmp_service) -> None:
    (tmp_path / "relu").mkdir()
    shutil.copy(TASKS / "add_reference.py", tmp_path / "relu" / "reference.py")
    shutil.copy(TASKS / "add_stage1.py", tmp_path / "relu" / "stage1.py")
    rep = tmp_service.validate(reference="relu/reference.py", candidates=["relu/stage1.py"], trials=1)
    assert rep.ok
    tmp_service.audit(path="relu/stage1.py", reference="relu/reference.py", compile=False)
    tmp_service.audit(path="relu/stage1.py", compile=False)  # no reference: joins the folder's task anyway
    task = journal.task_id(tmp_path / "relu" / "reference.py", tmp_path)
    assert task == "relu" and journal.list_tasks(tmp_path) == ["relu"]
    entries = journal.read_entries(tmp_path, task)
    assert [e["tool"] for e in entries] == ["run_validation", "audit_kernel", "audit_kernel"]
    assert entries[0]["files"]["relu/stage1.py"] == journal.sha256_file(tmp_path / "relu" / "stage1.py")
    env = {**os.environ, "PYTHONPATH": pythonpath()}
    report = [sys.executable, "-m", "pytorch_to_triton", "report", task, "--workspace", str(tmp_path)]
    out = subprocess.run(report, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "| stage1.py | PASS (interpreter) |" in out.stdout and "P0 0" in out.stdout
    with (tmp_path / "relu" / "stage1.py").open("a") as f:
        f.write("# rewritten, not validated\n")
    out = subprocess.run(report, capture_output=True, text=True, env=env, timeout=120)
    assert "PASS (interpreter) **stale** (stage1.py changed)" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "pytorch_to_triton", "report", "nope", "--workspace",
                          str(tmp_path)], capture_output=True, text=True, env=env, timeout=120)
    assert bad.returncode == 2 and "no journal" in bad.stderr


def test_a_shrunk_kernelbench_pass_says_its_sizes(tmp_path: Path) -> None:
    """A PASS at shrunk sizes must not read like a full-size pass in the report (a fresh assistant's complaint)."""
    ref, cand = tmp_path / "t" / "reference.py", tmp_path / "t" / "stage1.py"
    ref.parent.mkdir()
    ref.write_text("v1")
    cand.write_text("good")
    key = journal.content_key(tmp_path, [ref, cand])
    journal.append_entry(tmp_path, "t", {"tool": "run_validation", "stage": "stage1.py", "ok": True, "interpreter": True,
                                         "sizes_not_full": {"batch_size": 128, "dim": 192},
                                         "reference": "t/reference.py", **key})
    assert "| stage1.py | PASS (interpreter) at batch_size=128, dim=192 (not full size) |" in \
        journal.render_report(tmp_path, "t")


# ---- keyed on what can change the result (issue 29 item 4) -----------------------------------------------------
SIDE = """notes = "rows are contiguous"
dtypes = ["float32"]

[tolerances.float32]
rtol = 1e-4
atol = 1e-4
reason = "fp32 accumulation"

[[cases]]
name = "big"
shape = [4096]
"""


def _keyed_task(tmp_path: Path) -> tuple[Path, Path]:
    """A task with a sidecar and one validation, one benchmark and one audit row, each keyed per tool."""
    d = tmp_path / "t"
    d.mkdir()
    (d / "reference.py").write_text("v1")
    (d / "stage1.py").write_text("good")
    side = d / "reference.p2t.toml"
    side.write_text(SIDE)
    files = [d / "reference.py", d / "stage1.py", side]
    for tool, extra in (("run_validation", {"ok": True}), ("run_benchmark", {"ok": True, "median_ms": 0.5}),
                        ("audit_kernel", {"ok": True, "audit_counts": {"P0": 0, "P1": 1, "P2": 0}})):
        journal.append_entry(tmp_path, "t", {"tool": tool, "stage": "stage1.py", "file": "t/stage1.py",
                                             "reference": "t/reference.py", **extra,
                                             **journal.content_key(tmp_path, files, tool=tool)})
    return side, d / "stage1.py"


def _row(md: str, stage: str = "stage1.py") -> str:
    return next(x for x in md.splitlines() if x.startswith(f"| {stage}"))


def test_notes_and_bench_edits_leave_validation_and_audit_current(tmp_path: Path) -> None:
    side, _ = _keyed_task(tmp_path)
    assert "stale" not in journal.render_report(tmp_path, "t")
    side.write_text(SIDE.replace("rows are contiguous", "rows are contiguous; targets may be -100") +
                    '\n[bench]\nbytes = "2 * numel(inputs[0]) * 4"\nflops = "0"\n')
    row = _row(journal.render_report(tmp_path, "t"))
    assert row.startswith("| stage1.py | PASS |") and row.endswith("P1 1 / P2 0 |"), row  # validation, audit current
    assert "0.5000 **stale** (reference.p2t.toml [bench] changed)" in row, row  # the benchmark reads [bench]


def test_a_tolerance_reason_is_prose_its_numbers_are_not(tmp_path: Path) -> None:
    side, _ = _keyed_task(tmp_path)
    side.write_text(SIDE.replace('"fp32 accumulation"', '"fp32 accumulation over K <= 4096"'))
    assert "stale" not in journal.render_report(tmp_path, "t")
    side.write_text(SIDE.replace("rtol = 1e-4", "rtol = 1e-3"))
    row = _row(journal.render_report(tmp_path, "t"))
    assert "PASS **stale** (reference.p2t.toml [tolerances] changed)" in row, row
    assert row.endswith("P0 0 / P1 1 / P2 0 |")  # the audit does not read tolerances


@pytest.mark.parametrize("edit,section", [
    (lambda s: s.replace('shape = [4096]', 'shape = [4097]'), "[cases]"),
    (lambda s: s.replace('dtypes = ["float32"]', 'dtypes = ["float32", "bfloat16"]'), "[dtypes]"),
    (lambda s: "require = [\"nan_propagation\"]\n" + s, "[require]"),  # a key this version does not know counts
])
def test_settings_that_change_results_make_validation_stale(tmp_path: Path, edit, section: str) -> None:
    side, _ = _keyed_task(tmp_path)
    side.write_text(edit(SIDE))
    row = _row(journal.render_report(tmp_path, "t"))
    assert f"PASS **stale** (reference.p2t.toml {section} changed)" in row, row


def test_an_unparseable_sidecar_makes_rows_stale(tmp_path: Path) -> None:
    side, _ = _keyed_task(tmp_path)
    side.write_text(SIDE + "\n[[cases]\n")
    assert "PASS **stale** (reference.p2t.toml changed)" in _row(journal.render_report(tmp_path, "t"))


def test_no_row_for_a_file_that_is_gone(tmp_path: Path) -> None:
    _, stage1 = _keyed_task(tmp_path)
    (tmp_path / "t" / "stage2.py").write_text("next")
    journal.append_entry(tmp_path, "t", {"tool": "run_validation", "stage": "stage2.py", "file": "t/stage2.py",
                                         "ok": True, "reference": "t/reference.py",
                                         **journal.content_key(tmp_path, [tmp_path / "t" / "stage2.py"])})
    stage1.unlink()
    md = journal.render_report(tmp_path, "t")
    assert "| stage1.py" not in md and "| stage2.py | PASS |" in md
    assert "No row for stage1.py: the file is gone" in md


def test_service_rows_show_extra_cases_and_sidecar_settings(tmp_path: Path, tmp_service) -> None:
    (tmp_path / "add").mkdir()
    shutil.copy(TASKS / "add_reference.py", tmp_path / "add" / "reference.py")
    shutil.copy(TASKS / "add_stage1.py", tmp_path / "add" / "stage1.py")
    side = tmp_path / "add" / "reference.p2t.toml"
    side.write_text('notes = "x and y broadcast-free"\n\n[[cases]]\nname = "len_1025"\nshape = [1025]\n')
    rep = tmp_service.validate(reference="add/reference.py", candidates=["add/stage1.py"], trials=1,
                               only_cases=["odd_7", "len_1025"])
    assert rep.ok, rep.summary
    entry = journal.read_entries(tmp_path, "add")[-1]
    assert entry["extra_cases"] == ["len_1025"] and entry["file"] == "add/stage1.py"
    assert journal.content_key(tmp_path, [side], tool="run_validation")["files"]["add/reference.p2t.toml"] == \
        entry["files"]["add/reference.p2t.toml"]
    md = journal.render_report(tmp_path, "add")
    assert "- stage1.py: extra cases len_1025; sidecar: 1 case(s) len_1025" in md, md
    side.write_text(side.read_text().replace("broadcast-free", "broadcast-free, contiguous") +
                    '\n[bench]\nbytes = "3 * 4 * numel(inputs[0])"\n')
    assert "stale" not in journal.render_report(tmp_path, "add")


def test_a_stale_estimate_row_says_what_changed(tmp_path: Path) -> None:
    """A trial's sidecar edit made the estimate row say 'stale' with a footnote blaming 'the file', though stage1.py
    had not changed. The row now names the sidecar section, as the validation rows do."""
    side, _ = _keyed_task(tmp_path)
    files = [tmp_path / "t" / "reference.py", tmp_path / "t" / "stage1.py", side]
    journal.append_entry(tmp_path, "t", {"tool": "roofline_estimate", "stage": "stage1.py", "file": "t/stage1.py",
                                         "reference": "t/reference.py", "ok": True, "measured_at": "main",
                                         "scaled": {"load_bytes": 1e9, "store_bytes": 0, "dot_flops": {}},
                                         **journal.content_key(tmp_path, files, tool="roofline_estimate")})
    side.write_text(SIDE.replace('dtypes = ["float32"]', 'dtypes = ["float32", "bfloat16"]'))
    md = journal.render_report(tmp_path, "t")
    est = next(x for x in md.splitlines() if x.startswith("| stage1.py **stale**"))
    assert "(reference.p2t.toml [dtypes] changed)" in est, est
    assert "what its parentheses name" in md and "the file changed" not in md


def test_the_checks_a_validation_ran_are_words_not_dangling_colons() -> None:
    from pytorch_to_triton.service import _journal_ran

    got = _journal_ran([], [], {"kernelbench": {"checks": {"nan_inf": "ran: 2 variants, NaN kept",
                                                           "parameters": "perturbed 4 trainable",
                                                           "small_outputs": "checked: max|reference| < 10 x atol"}}})
    assert got["checks"] == {"nan_inf": "ran", "parameters": "perturbed", "small_outputs": "checked"}


def test_a_subset_run_does_not_replace_the_stages_full_validation(tmp_path: Path) -> None:
    """A trial's `--only-cases sized` run (3 cases) replaced stage 3's full 18-case pass in the report."""
    side, stage = _keyed_task(tmp_path)
    files = [tmp_path / "t" / "reference.py", stage, side]
    journal.append_entry(tmp_path, "t", {"tool": "run_validation", "stage": "stage1.py", "file": "t/stage1.py",
                                         "reference": "t/reference.py", "ok": False, "only_cases": ["sized"],
                                         **journal.content_key(tmp_path, files, tool="run_validation")})
    md = journal.render_report(tmp_path, "t")
    assert _row(md).startswith("| stage1.py | PASS |"), _row(md)  # the full run's verdict stands
    assert "- stage1.py: later, only sized: FAIL" in md


def test_audit_disputes_and_extra_cases_leave_the_estimate_current(tmp_path: Path) -> None:
    """A trial added [audit] accept entries and [[cases]]: every estimate row went stale, though neither changes what
    the estimate counts (one call at the validated size). Sizes do."""
    from pytorch_to_triton import journal_keys

    side = tmp_path / "reference.p2t.toml"
    side.write_text(SIDE)
    before = journal_keys.settings_key(side, "roofline_estimate")[0]
    side.write_text(SIDE.replace('shape = [4096]', 'shape = [4097]') +
                    '\n[audit]\naccept = [{check = "grid_floor_division", line = 3, reason = "exact"}]\n')
    assert journal_keys.settings_key(side, "roofline_estimate")[0] == before
    assert journal_keys.settings_key(side, "run_validation")[0] != before


def test_a_validation_its_caller_cancels_leaves_its_finished_cases(tmp_path: Path) -> None:
    """Issue 40: a validation killed by its caller kept nothing. Each finished case is logged as it finishes
    (journal.cases_path), and the run journal says the call was interrupted after how many cases."""
    import threading

    from pytorch_to_triton.errors import WorkerError
    from pytorch_to_triton.service import Service

    fix = Path(__file__).parent / "kernelbench_fixtures"
    (tmp_path / "t").mkdir()
    shutil.copy(fix / "affine_reference.py", tmp_path / "t" / "reference.py")
    shutil.copy(fix / "affine_good.py", tmp_path / "t" / "stage1.py")
    cancel = threading.Event()

    def on_event(msg: str, p: float | None, t: float | None) -> None:
        if ": odd " in msg:  # the main case and its layouts have finished
            cancel.set()

    svc = Service(tmp_path)
    try:
        with pytest.raises(WorkerError) as e:
            svc.validate(reference="t/reference.py", candidates=["t/stage1.py"], trials=1, cancel=cancel,
                         on_event=on_event)
        assert e.value.kind == "cancelled"
    finally:
        svc.close()
    logged = journal.read_cases(tmp_path, "t")
    assert logged and logged[0]["name"] == "shrunk" and logged[0]["stage"] == "t/stage1.py", logged
    row = journal.read_entries(tmp_path, "t")[-1]
    assert row["interrupted"] and row["cases_done"] >= 1 and row["cases_file"].endswith("cases/t.jsonl"), row
    assert "INTERRUPTED after" in journal.render_report(tmp_path, "t")
