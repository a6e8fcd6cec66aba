"""run_suite over the KernelBench-form corpus (tests/kernelbench_corpus, labels.json) on the interpreter: verdicts,
KernelBench's plain criterion beside ours, a crash that does not stop the suite, resume after SIGKILL, both layouts,
and the tool through the real stdio MCP client. Shrunk sizes are passed explicitly (SIZES), so the run stays small."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from conftest import HAS_CUDA

from pytorch_to_triton.errors import UsageError
from pytorch_to_triton.service import Service
from pytorch_to_triton.suite import discover, read_journal, run_suite

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "kernelbench_corpus"
LABELS = json.loads((CORPUS / "labels.json").read_text())
# Odd sizes (not multiples of any BLOCK), so the tail bugs show; tiny, so the interpreter is quick.
SIZES = {"gelu": {"batch_size": 3, "dim": 1000}, "sum_dim1": {"batch_size": 2, "dim1": 20, "dim2": 130},
         "cumsum": {"batch_size": 3, "length": 1100}}
# Dies in the middle of the main case's call (os._exit), as a segfaulting kernel would; the other cases then run on a
# fresh worker and get zeros. (Exiting on every case would restart the worker once per case: a minute of CPU.)
CRASH = '''"""Dies in the middle of a call on the main case (os._exit), as a segfaulting kernel would."""
import os
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        if x.shape == (3, 1000) and x.is_contiguous() and bool(torch.isfinite(x).all()) and float(x.abs().max()) < 1e3:
            os._exit(3)  # the main case only: not its layouts, its x1e4 values or its NaN/inf variant
        return torch.zeros_like(x)
'''


def _copy_problems(dest: Path, problems: list[str], skip_gpu_only: bool = True) -> list[str]:
    """Copy corpus problems into a workspace; returns the labelled keys copied."""
    keys = []
    for prob in problems:
        (dest / prob).mkdir(parents=True)
        shutil.copy(CORPUS / prob / "reference.py", dest / prob / "reference.py")
        for key, label in LABELS.items():
            if key.startswith(prob + "/") and not (skip_gpu_only and label.get("gpu_only") and not HAS_CUDA):
                shutil.copy(CORPUS / key, dest / key)
                keys.append(key)
    return keys


def _caught(row, label) -> bool:
    if label["expect"] == "pass":  # a layout-only bug passes, named in the robustness column
        return row.verdict == "pass" and set(label.get("robustness") or []) <= set(row.robustness)
    got = set(row.failing_checks)  # label semantics of tests/validation_corpus/harness.py
    need_all, need_any = label.get("checks") or [], label.get("checks_any") or []
    return row.verdict == "fail" and set(need_all) <= got and (not need_any or bool(got & set(need_any)))


def test_suite_verdicts_kernelbench_criterion_crash_and_resume(tmp_path: Path) -> None:
    """The default command's sample of the KernelBench-form corpus: two problems (a tail bug and a stale cache, a
    layout-only bug and a GPU-only race) at SIZES; tests/test_kernelbench_corpus.py runs the whole corpus."""
    suite_dir = tmp_path / "corpus"
    sizes = {k: SIZES[k] for k in ("gelu", "sum_dim1")}
    keys = _copy_problems(suite_dir, list(sizes))
    (suite_dir / "gelu" / "crash_exit.py").write_text(CRASH)  # sorts before good.py: the next unit must still pass
    svc = Service(tmp_path)
    events: list[str] = []
    try:
        t0 = time.monotonic()
        rep = run_suite(svc, directory="corpus", sizes=sizes, trials=1, timeout_s=120,
                        on_event=lambda m, p, t: events.append(m))
        first_s = time.monotonic() - t0
        rows = {f"{r.problem}/{r.candidate}": r for r in rep.rows}
        assert set(rows) == set(keys) | {"gelu/crash_exit.py"}
        for key in keys:
            assert _caught(rows[key], LABELS[key]), (key, rows[key].verdict, rows[key].failing_checks, rows[key].message)
        crash = rows["gelu/crash_exit.py"]
        assert crash.verdict == "fail" and "crashed" in crash.failing_checks, crash
        assert rows["gelu/good.py"].verdict == "pass"  # the worker was replaced after the crash
        # KernelBench's criterion: every correct candidate passes it, and so does a stride bug (it only ever runs
        # contiguous get_inputs()), which our non-contiguous variants catch.
        for key, label in LABELS.items():
            if key in rows and label["expect"] == "pass":
                assert rows[key].kernelbench == "pass", (key, rows[key].kernelbench_detail)
        for key, label in LABELS.items():
            if key in rows and label.get("kernelbench_any_size"):
                assert rows[key].kernelbench == label["kernelbench_any_size"], (key, rows[key].kernelbench_detail)
        # A stride bug KernelBench's criterion misses is named in the robustness column (strict=true fails it).
        assert rows["sum_dim1/stride_rows_by_cols.py"].robustness == ["layouts"]
        assert "| layouts |" in rep.markdown
        assert rep.ok and rep.interpreter and rep.problems == 2
        assert rep.fast_p["eager"]["0"] == 1.0 and rep.fast_p["torch.compile"]["0"] == 1.0
        assert rep.fast_p["eager"]["1"] is None  # no timings without a GPU
        assert not any(r.timed for r in rep.rows) and rep.spread["description"].startswith("no GPU")
        assert "| sum_dim1 | stride_rows_by_cols.py | pass | layouts |" in rep.markdown
        assert Path(rep.results_file).is_file() and Path(rep.markdown_file).is_file()
        assert any("stale_cache.py: fail" in e for e in events)
        journaled = read_journal(Path(rep.journal))
        assert len(journaled) == len(rows)

        # A second call resumes everything from the journal: nothing runs, same verdicts.
        t0 = time.monotonic()
        again = run_suite(svc, directory="corpus", sizes=sizes, trials=1, timeout_s=120)
        assert time.monotonic() - t0 < min(5.0, first_s / 3)
        assert all(r.resumed for r in again.rows) and again.counts["run"] == 0
        assert [(r.problem, r.candidate, r.verdict) for r in again.rows] == \
               [(r.problem, r.candidate, r.verdict) for r in rep.rows]
        # An edited candidate has a new content hash: only it runs again.
        good = suite_dir / "sum_dim1" / "good.py"
        good.write_text(good.read_text() + "\n# edited\n")
        edited = run_suite(svc, directory="corpus", sizes=sizes, trials=1, timeout_s=120)
        assert [f"{r.problem}/{r.candidate}" for r in edited.rows if not r.resumed] == ["sum_dim1/good.py"]
    finally:
        svc.close()


def test_kernelbench_level_layout_and_refusals(tmp_path: Path) -> None:
    lv = tmp_path / "KernelBench" / "level1"
    lv.mkdir(parents=True)
    shutil.copy(CORPUS / "gelu" / "reference.py", lv / "26_GELU_.py")
    shutil.copy(CORPUS / "cumsum" / "reference.py", lv / "89_cumsum.py")
    shutil.copy(CORPUS / "sum_dim1" / "reference.py", lv / "47_Sum_reduction.py")
    runs = tmp_path / "runs" / "level1"
    (runs / "89_cumsum").mkdir(parents=True)
    shutil.copy(CORPUS / "gelu" / "good.py", runs / "26_GELU_.py")
    shutil.copy(CORPUS / "cumsum" / "good.py", runs / "89_cumsum" / "stage1.py")
    shutil.copy(CORPUS / "cumsum" / "tail_floor_chunks.py", runs / "89_cumsum" / "stage2.py")
    layout, probs = discover(tmp_path / "KernelBench", tmp_path / "runs")
    assert layout == "kernelbench levels"
    got = {p.name: [c.name for c in p.candidates] for p in probs}
    assert got == {"level1/26_GELU_": ["26_GELU_.py"], "level1/47_Sum_reduction": [],
                   "level1/89_cumsum": ["stage1.py", "stage2.py"]}
    with pytest.raises(UsageError, match="candidates_dir"):
        discover(tmp_path / "KernelBench")  # level folders without a candidates folder: say what to pass
    layout1, probs1 = discover(CORPUS)
    assert layout1 == "problem folders" and {p.name for p in probs1} == {k.split("/")[0] for k in LABELS}


def _cli(ws: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "pytorch_to_triton", "suite", "corpus", "--workspace", str(ws), "--name", "r",
            "--sizes", json.dumps(SIZES), "--trials", "1", "--no-kernelbench", *args]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["P2T_SPARE_WORKER"] = "0"  # no standby worker competing for the CI's 2 cores at start-up
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "server"), env.get("PYTHONPATH", "")])
    return env


# The corpus command: a long end-to-end suite run; the default command keeps the suite's resume from its journal
# (test_suite_verdicts_kernelbench_criterion_crash_and_resume), journals that survive a kill (tests/test_faults.py)
# and the MCP client over stdio (tests/test_mcp.py).
@pytest.mark.corpus
def test_suite_killed_midway_resumes_without_redoing(tmp_path: Path) -> None:
    """A real `pytorch-to-triton suite` process, SIGKILLed once the first unit is journaled, then run again."""
    _copy_problems(tmp_path / "corpus", ["gelu"])
    good = (tmp_path / "corpus" / "gelu" / "good.py").read_text()
    # runs second (sorted names) and slowly, so the kill lands while it is in flight
    slow = good.replace("    def forward(self, x: torch.Tensor) -> torch.Tensor:\n",
                        "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        __import__('time').sleep(0.4)\n")
    assert slow != good
    (tmp_path / "corpus" / "gelu" / "slow_good.py").write_text(slow)
    n_units = 4
    journal = tmp_path / ".pytorch-to-triton" / "suites" / "r" / "results.jsonl"
    proc = subprocess.Popen(_cli(tmp_path, "-q"), env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (journal.is_file() and read_journal(journal)):
            assert proc.poll() is None, "the suite ended before the first unit was journaled"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = read_journal(journal)
    assert 1 <= len(before) < n_units, f"expected the kill to land midway ({n_units} units in all)"
    lines_before = journal.read_text().count("\n")
    out = subprocess.run(_cli(tmp_path, "--json", "-q"), env=_env(), capture_output=True, text=True, timeout=300,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    rep = json.loads(out.stdout)
    assert len(rep["rows"]) == n_units
    resumed = {r["key"] for r in rep["rows"] if r["resumed"]}
    assert resumed == set(before)  # every unit finished before the kill is reused, none redone
    assert rep["counts"]["run"] == n_units - len(before)
    after_lines = journal.read_text().splitlines()
    assert len(after_lines) == lines_before + (n_units - len(before))
    keys = [json.loads(x)["key"] for x in after_lines if x.strip()]
    assert len(keys) == len(set(keys)), "a finished unit was journaled twice"


# The corpus command: a long end-to-end suite run; the default command keeps the suite's resume from its journal
# (test_suite_verdicts_kernelbench_criterion_crash_and_resume), journals that survive a kill (tests/test_faults.py)
# and the MCP client over stdio (tests/test_mcp.py).
@pytest.mark.corpus
def test_run_suite_through_stdio_mcp_kernelbench_layout(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    lv = tmp_path / "kb" / "level1"
    lv.mkdir(parents=True)
    shutil.copy(CORPUS / "gelu" / "reference.py", lv / "26_GELU_.py")
    cands = tmp_path / "mine" / "level1" / "26_GELU_"
    cands.mkdir(parents=True)
    shutil.copy(CORPUS / "gelu" / "good.py", cands / "good.py")
    shutil.copy(CORPUS / "gelu" / "tail_floor_grid.py", cands / "tail.py")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH", "VIRTUAL_ENV", "LANG")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "server"), env.get("PYTHONPATH", "")])
    params = StdioServerParameters(command=sys.executable, args=["-m", "pytorch_to_triton", "serve", "--workspace",
                                                                 str(tmp_path)], env=env, cwd=str(tmp_path))
    progress: list[str] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async def go():
        async with Client(params, read_timeout_seconds=300) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert "run_suite" in tools and tools["run_suite"].output_schema["type"] == "object"
            res = await client.call_tool("run_suite", {"directory": "kb", "candidates_dir": "mine", "trials": 1,
                                                       "sizes": {"batch_size": 3, "dim": 1000}},
                                         progress_callback=on_progress)
            assert not res.is_error, res.content
            sc = res.structured_content
            assert sc["layout"] == "kernelbench levels" and sc["problems"] == 1
            rows = {r["candidate"]: r for r in sc["rows"]}
            assert set(rows) == {"good.py", "tail.py"} and rows["good.py"]["verdict"] == "pass", rows
            assert rows["tail.py"]["verdict"] == "fail" and "unwritten_output" in rows["tail.py"]["failing_checks"]
            assert "| level1/26_GELU_ | good.py | pass |" in res.content[0].text
            bad = await client.call_tool("run_suite", {"directory": "kb"})
            assert bad.is_error and "candidates_dir" in bad.content[0].text

    anyio.run(go)
    assert any("26_GELU_/good.py" in m for m in progress), progress


def test_fast_p_markdown_and_plot_from_timed_rows(tmp_path: Path) -> None:
    """fast_p as KernelBench's src/score.py defines it (correct and speedup > p, over all problems), per problem's
    best validated candidate; the markdown rows and the PNG, from rows a GPU run would give."""
    from pytorch_to_triton.schemas import SuiteReport, SuiteRow
    from pytorch_to_triton.suite import _fast_p, _write_outputs

    def row(problem: str, cand: str, verdict: str, eager: float | None, compiled: float | None) -> SuiteRow:
        return SuiteRow(problem=problem, candidate=cand, key=f"{problem}{cand}", verdict=verdict,
                        speedup_vs_eager=eager, speedup_vs_compile=compiled, timed=eager is not None,
                        median_ms=1.0 if eager else None, kernelbench="pass")

    rows = [row("a", "s1.py", "pass", 1.2, 0.9), row("a", "s2.py", "pass", 2.5, 1.6),  # best of a: 2.5x / 1.6x
            row("b", "s1.py", "pass", 1.2, 0.7), row("c", "s1.py", "fail", None, None),
            row("d", "fast_but_wrong.py", "fail", 9.0, 9.0)]  # a failed candidate never counts, however fast
    fp = _fast_p(rows, 4, timed=True)
    assert fp["eager"] == {"0": 0.5, "1": 0.5, "1.5": 0.25, "2": 0.25}
    assert fp["torch.compile"] == {"0": 0.5, "1": 0.25, "1.5": 0.25, "2": 0.0}
    rep = SuiteReport(ok=True, name="t", directory="d", layout="problem folders", problems=4, rows=rows, fast_p=fp)
    _write_outputs(rep, tmp_path)
    assert "| a | s2.py | pass | – | pass | 1.0000 | 2.50× | 1.60× |" in rep.markdown  # – : no robustness finding
    assert "| vs eager | 0.50 | 0.50 | 0.25 | 0.25 |" in rep.markdown
    if rep.plot is None:
        assert any("matplotlib" in n for n in rep.notes)
    else:
        assert Path(rep.plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(Path(rep.results_file).read_text())["fast_p"] == fp
