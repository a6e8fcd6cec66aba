"""The run journal: appended per tool call, atomic, rendered as a stage-by-stage table (CLI and service)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
    side.write_text('notes = "rows are contiguous"\n')  # a new sidecar changes what a run would use
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
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
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
