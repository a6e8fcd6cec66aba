"""run_suite: score a whole directory of problems at once (validate, KernelBench's criterion, benchmark), resumably.

Plain functions over a Service (no torch here). Layouts (references/task-format.md, "## Suites"):
1. DIR/<problem>/reference.py with candidate files beside it (every other .py not starting with "_").
2. KernelBench level folders: DIR/level1/NN_Name.py ... and candidates_dir holding files named like the problems
   (candidates_dir/level1/NN_Name.py), or a folder of them per problem (candidates_dir/level1/NN_Name/*.py).

Each (problem, candidate) is one unit: run_validation, KernelBench's plain criterion (worker/validation/kb_criterion.py), then
run_benchmark against eager and torch.compile when it validated on a GPU. A unit's result is appended to
.pytorch-to-triton/suites/<name>/results.jsonl as it finishes, keyed by a content hash of reference + candidate +
settings, so a killed suite re-runs only the unit in flight. A crash, hang or out-of-memory in one unit is that
unit's verdict: the worker pool replaces a dead or timed-out worker before the next call.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .errors import P2TError, UsageError, WorkerError
from .schemas import SuiteReport, SuiteRow, ValidationReport
from .workspace import atomic_write

OnEvent = Callable[[str, float | None, float | None], None]
FAST_P = (0.0, 1.0, 1.5, 2.0)
BASELINES = (("eager", "speedup_vs_eager"), ("torch.compile", "speedup_vs_compile"))
UNIT_TIMEOUT_S = 900.0
KB_TOLERANCE = 1e-4  # KernelBench's current fp32 atol = rtol (worker/validation/kb_criterion.py cites the source)


@dataclass
class Problem:
    """One reference and the candidate files that implement it."""

    name: str
    reference: Path
    candidates: list[Path]


def _py_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.py") if p.is_file() and not p.name.startswith(("_", ".")))


def discover(directory: Path, candidates_dir: Path | None = None) -> tuple[str, list[Problem]]:
    """The problems of a suite directory and its layout name ('problem folders' or 'kernelbench levels')."""
    if not directory.is_dir():
        raise UsageError(f"suite directory {directory} is not a directory")
    if candidates_dir is None:
        if (directory / "reference.py").is_file():  # a single problem folder
            folders = [directory]
        else:
            folders = sorted(p for p in directory.iterdir() if p.is_dir() and (p / "reference.py").is_file())
        if not folders:
            raise UsageError(f"{directory} holds no <problem>/reference.py folders. Layout 1: DIR/<problem>/reference.py "
                             "with candidate files beside it; layout 2 (KernelBench level folders, e.g. level1/"
                             "19_ReLU.py): also pass candidates_dir, a folder of ModelNew files named like the problems")
        probs = [Problem(f.name if f != directory else directory.name, f / "reference.py",
                         [p for p in _py_files(f) if p.name != "reference.py"]) for f in folders]
        return "problem folders", probs
    if not candidates_dir.is_dir():
        raise UsageError(f"candidates_dir {candidates_dir} is not a directory")
    probs = []
    for ref in sorted(directory.rglob("*.py")):
        rel = ref.relative_to(directory)
        if ref.name.startswith(("_", ".")) or any(part.startswith(".") for part in rel.parts):
            continue
        if candidates_dir == directory or candidates_dir in ref.parents:
            continue
        cands = []
        if (candidates_dir / rel).is_file():
            cands.append(candidates_dir / rel)
        folder = candidates_dir / rel.with_suffix("")
        if folder.is_dir():
            cands += _py_files(folder)
        probs.append(Problem(rel.with_suffix("").as_posix(), ref, cands))
    if not probs:
        raise UsageError(f"{directory} holds no problem files (*.py); KernelBench layout: DIR/level1/NN_Name.py")
    return "kernelbench levels", probs


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.") or "suite"


def unit_key(reference: Path, candidate: Path, settings: dict[str, Any]) -> str:
    """Content hash of the reference and candidate sources plus the settings that change a verdict."""
    h = hashlib.sha256()
    for p in (reference, candidate):
        h.update(p.read_bytes())
        h.update(b"\0")
    h.update(json.dumps(settings, sort_keys=True, default=str).encode())
    return h.hexdigest()[:24]


def read_journal(path: Path) -> dict[str, dict[str, Any]]:
    """key -> the latest row journaled for it (a torn last line from a kill is skipped)."""
    rows: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return rows
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and rec.get("key"):
            rows[rec["key"]] = rec
    return rows


def _append(path: Path, row: SuiteRow, lock: threading.Lock) -> None:
    line = json.dumps(row.model_dump(mode="json"), sort_keys=True) + "\n"
    with lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())  # journaled means on disk: a SIGKILL right after must not lose it


def _resumable(rec: dict[str, Any] | None) -> SuiteRow | None:
    """A journaled row to reuse; None for an 'error' (a harness or usage error, not a verdict: it runs again) or a
    row an older version wrote that no longer parses."""
    if not rec or rec.get("verdict") == "error":
        return None
    try:
        return SuiteRow.model_validate({**rec, "resumed": True})
    except ValidationError:
        return None


def _sizes_for(sizes: dict[str, Any] | None, problem: str) -> dict[str, int] | None:
    """Per-problem overrides ({'gelu': {'dim': 1000}}) or one set for every problem ({'batch_size': 7})."""
    if not sizes:
        return None
    if all(isinstance(v, dict) for v in sizes.values()):
        per = sizes.get(problem) or sizes.get(problem.rsplit("/", 1)[-1])
        return dict(per) if per else None
    return dict(sizes)


def _failures(rep: ValidationReport) -> tuple[list[str], str]:
    """Every failing check of a one-candidate report (fix order) and the first one's message."""
    for cand in rep.candidates:
        fails = [f for f in cand.findings if f.severity == "fail"]
        if fails:
            return [f.check for f in fails], f"{fails[0].check} ({fails[0].case}): {fails[0].message}"[:400]
        if cand.error:
            return [str(cand.error.get("type") or "exception")], str(cand.error.get("message", ""))[:400]
    return [], ""


class _Suite:
    """State of one run_suite call: the service, the settings, the journal."""

    def __init__(self, service: Any, *, timeout_s: float, benchmark: bool, kernelbench: bool, trials: int,
                 compile: str, repeats: int, sizes: dict[str, Any] | None, journal: Path,
                 cancel: threading.Event | None, on_event: OnEvent | None, strict: bool = False):
        self.svc = service
        self.strict = strict
        self.timeout_s = timeout_s
        self.benchmark = benchmark
        self.kernelbench = kernelbench
        self.trials = trials
        self.compile = compile
        self.repeats = repeats
        self.sizes = sizes
        self.journal = journal
        self.cancel = cancel
        self.on_event = on_event
        self.lock = threading.Lock()
        self.events: queue.Queue[tuple[str, float, float]] = queue.Queue()
        self.done = 0
        self.total = 0
        self.gpu = any(s.name.startswith("cuda") for s in service.pool.slots)
        self.require: list[str] = []  # ["all_triton"]: any PyTorch compute op fails (worker/validation/composition.py)
        self.sandboxes: list[str] = []  # runtime.sandbox of the validations this call ran, each once

    def event(self, msg: str) -> None:
        # Queued, and delivered by the calling thread (pump): an MCP progress callback only works from the thread
        # the server handed the call to, not from the per-GPU threads.
        if self.on_event is not None:
            with self.lock:
                done, total = self.done, self.total
            self.events.put((msg, float(done), float(total)))

    def pump(self, threads: list[threading.Thread]) -> None:
        """Deliver queued progress events until every thread has finished."""
        while True:
            alive = any(t.is_alive() for t in threads)
            try:
                msg, done, total = self.events.get(timeout=0.1)
            except queue.Empty:
                if not alive:
                    return
                continue
            if self.on_event is not None:
                self.on_event(msg, done, total)

    def settings(self, problem: str) -> dict[str, Any]:
        return {"gpu": self.gpu, "sizes": _sizes_for(self.sizes, problem), "trials": self.trials,
                "benchmark": self.benchmark and self.gpu, "compile": self.compile, "repeats": self.repeats,
                "kernelbench": self.kernelbench, **({"require": self.require} if self.require else {}),
                **({"strict": True} if self.strict else {})}

    # ---- one unit ---------------------------------------------------------------------------------
    def run_unit(self, prob: Problem, cand: Path, key: str, device: str | None) -> SuiteRow:
        """Validate, KernelBench-check and (on a GPU, when valid) benchmark one candidate; never raises for it."""
        ws = self.svc.ws
        ref_rel, cand_rel = ws.relative(prob.reference), ws.relative(cand)
        t0 = time.monotonic()
        deadline = t0 + self.timeout_s
        sizes = _sizes_for(self.sizes, prob.name)
        row = SuiteRow(problem=prob.name, candidate=cand.name, key=key, verdict="error", device=device or "",
                       interpreter=not self.gpu)

        def left() -> float:
            return max(1.0, min(3600.0, deadline - time.monotonic()))

        def fwd(message: str, progress: float | None, total: float | None) -> None:
            self.event(f"{prob.name}/{cand.name}: {message}")

        try:
            kw: dict[str, Any] = {"sizes": sizes} if sizes else {}
            if self.require:
                kw["require"] = self.require
            if self.strict:
                kw["strict"] = True
            rep = self.svc.validate(reference=ref_rel, candidates=[cand_rel], trials=self.trials, timeout_s=left(),
                                    device=device, on_event=fwd, cancel=self.cancel, **kw)
            row.interpreter = rep.interpreter
            row.device = str(rep.runtime.get("worker_device") or device or rep.device)
            with self.lock:
                if rep.runtime.get("sandbox") and rep.runtime["sandbox"] not in self.sandboxes:
                    self.sandboxes.append(rep.runtime["sandbox"])
            row.verdict = "pass" if rep.ok else "fail"
            row.failing_checks, row.message = _failures(rep)
            row.failing_check = row.failing_checks[0] if row.failing_checks else None
            row.robustness = list(dict.fromkeys(f.kind for c in rep.candidates for f in c.robustness))
            if rep.ok:
                row.message = rep.summary.splitlines()[0] if rep.summary else "pass"
            row.notes += [n for c in rep.candidates for n in c.notes][:5]
            extras = [c.model_extra or {} for cr in rep.candidates for c in cr.cases]
            # the worker's per-case peak (worker/validation/memory.py: GPU max_memory_allocated, or the host RSS high-water mark)
            peaks = [x["peak_mem_bytes"] for x in extras if isinstance(x.get("peak_mem_bytes"), (int, float))]
            if peaks and not rep.interpreter:
                row.peak_mem_mb = round(max(peaks) / 2**20, 1)
            if not sizes and rep.interpreter:  # KernelBench's criterion then runs at the sizes validation shrank to
                sizes = next((dict(x["sizes"]) for x in extras if isinstance(x.get("sizes"), dict)), None)
        except WorkerError as e:
            if e.kind == "cancelled":
                raise
            row.message = f"{e.kind}: {e}"[:400]
        except P2TError as e:  # a usage error on this problem (broken reference, too large): data for the suite
            row.message = f"usage error: {e}"[:600]
        # Where it ran decides, not the slot's name: a "cuda" slot whose worker found no GPU runs the interpreter.
        if self.kernelbench and row.verdict != "error":
            self._kernelbench(row, prob, cand, sizes, device, left())
        if self.benchmark and not row.interpreter and row.verdict == "pass":
            self._bench(row, ref_rel, cand_rel, sizes, device, left, fwd)
        row.time_s = round(time.monotonic() - t0, 2)
        return row

    def _kernelbench(self, row: SuiteRow, prob: Problem, cand: Path, sizes: dict[str, int] | None,
                     device: str | None, timeout_s: float) -> None:
        if row.interpreter and not sizes:
            row.kernelbench, row.kernelbench_detail = "skipped", "no GPU and no sizes known: the full size is not run on CPU"
            return
        args = {"workspace": str(self.svc.ws.root), "reference": str(prob.reference), "candidate": str(cand),
                "sizes": sizes or {}, "tolerance": KB_TOLERANCE}
        try:
            res = self.svc.pool.call("kernelbench_check", args, timeout_s=timeout_s, device=device or None,
                                     cancel=self.cancel)
        except WorkerError as e:
            if e.kind == "cancelled":
                raise
            row.kernelbench, row.kernelbench_detail = "fail", f"{e.kind}: {e}"[:300]
            return
        if not res.get("applicable", True):
            row.kernelbench, row.kernelbench_detail = "n/a", str(res.get("reason", ""))
            return
        row.kernelbench = "pass" if res.get("pass") else "fail"
        detail = f"{res.get('passed_trials')}/{res.get('trials')} trials at atol=rtol={res.get('atol')}"
        if sizes:
            detail += " at sizes " + ", ".join(f"{k}={v}" for k, v in sizes.items())
        if res.get("error"):
            detail += f"; {res['error']}"
        elif res.get("max_difference") is not None:
            detail += f"; max difference {res['max_difference']}"
        row.kernelbench_detail = detail[:400]

    def _bench(self, row: SuiteRow, ref_rel: str, cand_rel: str, sizes: dict[str, int] | None, device: str | None,
               left: Callable[[], float], fwd: OnEvent) -> None:
        kw: dict[str, Any] = {"sizes": sizes} if sizes else {}
        try:
            rep = self.svc.benchmark(reference=ref_rel, candidates=[cand_rel], compile=self.compile,
                                     repeats=self.repeats, timeout_s=left(), device=row.device or device,
                                     on_event=fwd, cancel=self.cancel, **kw)
        except WorkerError as e:
            if e.kind == "cancelled":
                raise
            row.notes.append(f"benchmark failed: {e.kind}: {e}"[:300])
            return
        except P2TError as e:
            row.notes.append(f"benchmark refused: {e}"[:300])
            return
        by = {t.impl: t for t in rep.timings}
        mine = next((t for t in rep.timings if t.impl not in ("eager", "torch.compile")), None)
        if by.get("eager") is not None:
            row.eager_ms = by["eager"].median_ms
        if by.get("torch.compile") is not None:
            row.compile_ms = by["torch.compile"].median_ms
        if mine is None or not mine.ok or mine.median_ms is None:
            why = (mine.error or "; ".join(mine.suspect)) if mine is not None else rep.verdict
            row.notes.append(f"not timed: {why}"[:300])
            return
        row.timed = True
        row.median_ms = mine.median_ms
        row.speedup_vs_eager, row.speedup_vs_compile = mine.speedup_vs_eager, mine.speedup_vs_compile
        pcts = [p for p in (mine.pct_peak_bw, mine.pct_peak_flops) if p is not None]
        row.pct_peak = max(pcts) if pcts else None
        if mine.peak_mem_mb is not None:
            row.peak_mem_mb = mine.peak_mem_mb
        row.notes += [f"suspect: {s}" for s in mine.suspect][:3]


def run_suite(
    service: Any,
    *,
    directory: str,
    candidates_dir: str | None = None,
    name: str | None = None,
    problems: list[str] | None = None,
    redo: bool = False,
    timeout_s: float = UNIT_TIMEOUT_S,
    benchmark: bool = True,
    kernelbench: bool = True,
    trials: int = 3,
    compile: str = "default",
    repeats: int = 3,
    sizes: dict[str, Any] | None = None,
    strict: bool = False,
    on_event: OnEvent | None = None,
    cancel: threading.Event | None = None,
    stop: threading.Event | None = None,
    all_triton: bool = False,
) -> SuiteReport:
    """Validate (and on a GPU benchmark) every candidate of every problem in a directory; resumable.

    `cancel` kills the unit in flight and raises; `stop` (a time budget) lets it finish, starts no more, and reports
    the rest as 'not run' (not journaled, so the next call runs them). `all_triton` fails any candidate that keeps
    PyTorch compute (a cuBLAS matmul included), as KernelBench-style loops that score Triton alone want."""
    ws = service.ws
    root = ws.resolve(directory, what="directory", must_exist=False)
    cdir = ws.resolve(candidates_dir, what="candidates_dir", must_exist=False) if candidates_dir else None
    layout, probs = discover(root, cdir)
    if problems:
        unknown = set(problems) - {p.name for p in probs}
        if unknown:
            raise UsageError(f"problems {sorted(unknown)} are not in the suite; it has {[p.name for p in probs]}")
        probs = [p for p in probs if p.name in problems]
    if not 1 <= float(timeout_s) <= 3600:
        raise UsageError("timeout_s (per problem candidate) must be between 1 and 3600 seconds")
    if not 1 <= int(trials) <= 20 or not 1 <= int(repeats) <= 20:
        raise UsageError("trials and repeats must be between 1 and 20")
    if compile not in ("default", "max-autotune", "reduce-overhead", "none"):
        raise UsageError("compile must be 'default', 'max-autotune', 'reduce-overhead' or 'none'")
    suite_name = _slug(name or ws.relative(root) + (f"--{ws.relative(cdir)}" if cdir else ""))
    out_dir = ws.state_dir / "suites" / suite_name
    journal = out_dir / "results.jsonl"
    s = _Suite(service, timeout_s=float(timeout_s), benchmark=benchmark, kernelbench=kernelbench, trials=int(trials),
               compile=compile, repeats=int(repeats), sizes=sizes, journal=journal, cancel=cancel, on_event=on_event,
               strict=strict)
    s.require = ["all_triton"] if all_triton else []
    done_before = {} if redo else read_journal(journal)
    units: list[tuple[int, Problem, Path, str]] = []
    rows: dict[int, SuiteRow] = {}
    idx = 0
    for prob in probs:
        if not prob.candidates:
            rows[idx] = SuiteRow(problem=prob.name, candidate="-", key="", verdict="no candidate",
                                 message="no candidate file found for this problem")
            idx += 1
            continue
        for cand in prob.candidates:
            key = unit_key(prob.reference, cand, s.settings(prob.name))
            old = _resumable(done_before.get(key))
            if old is not None:
                rows[idx] = old
            else:
                units.append((idx, prob, cand, key))
            idx += 1
    s.total = len(units)
    devices = [sl.name for sl in service.pool.slots]
    per_device: dict[str, list[str]] = {d: [] for d in devices}
    work: queue.Queue[tuple[int, Problem, Path, str]] = queue.Queue()
    for u in units:
        work.put(u)
    errors: list[BaseException] = []

    def worker(device: str) -> None:
        while not errors:
            if (cancel is not None and cancel.is_set()) or (stop is not None and stop.is_set()):
                return
            try:
                i, prob, cand, key = work.get_nowait()
            except queue.Empty:
                return
            s.event(f"{prob.name}/{cand.name}: starting on {device}")
            try:
                row = s.run_unit(prob, cand, key, device if len(devices) > 1 else None)
            except WorkerError as e:  # cancelled: stop here; the finished units are journaled
                errors.append(e)
                return
            except Exception as e:  # noqa: BLE001 - a bug of ours on one unit must not stop the others
                row = SuiteRow(problem=prob.name, candidate=cand.name, key=key, verdict="error", device=device,
                               message=f"internal error ({type(e).__name__}: {e}); please report it"[:400])
            _append(journal, row, s.lock)
            with s.lock:
                rows[i] = row
                per_device.setdefault(row.device or device, []).append(f"{prob.name}/{cand.name}")
                s.done += 1
                eta = _eta(t_start, s.done, s.total, row.device or device, len(per_device[row.device or device]))
            s.event(f"{prob.name}/{cand.name}: {row.verdict}" + (f" ({row.failing_check})" if row.failing_check else "")
                    + eta)

    # One thread per worker slot: each GPU validates and times its own problems one at a time, so timings on one GPU
    # never overlap; on one GPU (or the CPU interpreter) that is simply one problem after another.
    t_start = time.monotonic()
    threads = [threading.Thread(target=worker, args=(d,), name=f"p2t-suite-{d}", daemon=True) for d in devices]
    for t in threads:
        t.start()
    s.pump(threads)
    for t in threads:
        t.join()
    if errors:
        raise errors[0]  # cancelled: the finished units are journaled, a re-run resumes
    for i, prob, cand, key in units:
        if i not in rows:  # stopped at the time budget before it started
            rows[i] = SuiteRow(problem=prob.name, candidate=cand.name, key=key, verdict="not run",
                               message="stopped before this unit started; call again to resume")
    ordered = [rows[i] for i in sorted(rows)]
    report = _report(suite_name, ws.relative(root), layout, len(probs), ordered, s, devices, per_device)
    report.journal = str(journal)
    _write_outputs(report, out_dir)
    return report


def _eta(t_start: float, done: int, total: int, device: str, on_device: int) -> str:
    """' [cuda:3@host: 5 done; 12/43, ETA 2m10s]': progress per GPU, and the rest at the pace so far."""
    left = (time.monotonic() - t_start) / max(done, 1) * (total - done)
    return f" [{device}: {on_device} done; {done}/{total}, ETA {int(left // 60)}m{int(left % 60):02d}s]"


def _fast_p(rows: list[SuiteRow], n_problems: int, timed: bool) -> dict[str, dict[str, float | None]]:
    """KernelBench's fast_p (src/score.py: correct and speedup > p, over all problems), per problem's best candidate."""
    out: dict[str, dict[str, float | None]] = {}
    by_problem: dict[str, list[SuiteRow]] = {}
    for r in rows:
        by_problem.setdefault(r.problem, []).append(r)
    for base, attr in BASELINES:
        vals: dict[str, float | None] = {}
        for p in FAST_P:
            if n_problems == 0:
                vals[_pkey(p)] = None
                continue
            if p == 0:  # fast_0 is the share of problems with a correct candidate, timed or not
                hits = sum(any(r.verdict == "pass" for r in rs) for rs in by_problem.values())
            elif not timed:
                vals[_pkey(p)] = None
                continue
            else:
                hits = sum(any(r.verdict == "pass" and (getattr(r, attr) or 0) > p for r in rs)
                           for rs in by_problem.values())
            vals[_pkey(p)] = round(hits / n_problems, 4)
        out[base] = vals
    return out


def _pkey(p: float) -> str:
    return f"{p:g}"


def _fmt(v: Any, spec: str, suffix: str = "") -> str:
    return "–" if v is None else f"{v:{spec}}{suffix}"


def render_markdown(rep: SuiteReport) -> str:
    """The suite as markdown: the fast_p table, then one row per (problem, candidate)."""
    lines = [f"# Suite {rep.name}", "", f"{rep.summary.splitlines()[0] if rep.summary else ''}", "",
             "| fast_p | " + " | ".join(f"p={_pkey(p)}" for p in FAST_P) + " |",
             "|---|" + "---|" * len(FAST_P)]
    for base, vals in rep.fast_p.items():
        lines.append(f"| vs {base} | " + " | ".join(_fmt(vals.get(_pkey(p)), ".2f") for p in FAST_P) + " |")
    lines += ["", "| problem | candidate | verdict | not robust to | KernelBench criterion | median ms | vs eager | "
              "vs compile | % of peak | peak memory |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rep.rows:
        verdict = r.verdict + (f" ({r.failing_check})" if r.failing_check else "") + (" ↺" if r.resumed else "")
        mem = _fmt(r.peak_mem_mb, ".0f", " MB")
        robust = ", ".join(r.robustness) or "–"
        lines.append(f"| {r.problem} | {r.candidate} | {verdict} | {robust} | {r.kernelbench} | {_fmt(r.median_ms, '.4f')} | "
                     f"{_fmt(r.speedup_vs_eager, '.2f', '×')} | {_fmt(r.speedup_vs_compile, '.2f', '×')} | "
                     f"{_fmt(r.pct_peak, '.0f', '%')} | {mem} |")
    if rep.caught_by_stricter_checks:
        lines += ["", "Passed KernelBench's criterion, failed our validation: " +
                  ", ".join(rep.caught_by_stricter_checks)]
    lines += ["", f"Work spread: {rep.spread.get('description', '')}"]
    lines += [f"- {n}" for n in rep.notes]
    if rep.plot:
        lines += ["", f"![speedup distribution]({rep.plot})"]
    return "\n".join(lines) + "\n"


def _report(name: str, directory: str, layout: str, n_problems: int, rows: list[SuiteRow], s: _Suite,
            devices: list[str], per_device: dict[str, list[str]]) -> SuiteReport:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    counts["resumed"] = sum(r.resumed for r in rows)
    counts["run"] = sum(not r.resumed and r.verdict not in ("no candidate", "not run") for r in rows)
    counts["timed"] = sum(r.timed for r in rows)
    ran = [r for r in rows if r.verdict not in ("no candidate", "not run")]
    interp = all(r.interpreter for r in ran) if ran else not s.gpu
    timed = s.benchmark and not interp
    if interp:
        desc = (f"no GPU: {len(devices)} worker(s) running Triton's CPU interpreter"
                + (", one problem after another" if len(devices) == 1 else ", problems taken from one queue")
                + "; no timings")
    elif len(devices) == 1:
        desc = f"one GPU ({devices[0]}): one problem at a time, so timings never overlap"
    else:
        desc = (f"{len(devices)} GPU workers ({', '.join(devices)}): problems taken from one queue, each GPU validating "
                "and timing one problem at a time")
    spread = {"description": desc, "devices": devices, "per_device": {d: v for d, v in per_device.items() if v}}
    kb_problems = {r.problem for r in rows if r.kernelbench == "pass"}
    caught = [f"{r.problem}/{r.candidate} ({r.failing_check})" for r in rows
              if r.kernelbench == "pass" and r.verdict == "fail"]
    notes = []
    if counts.get("not run"):
        notes.append(f"{counts['not run']} units not run (stopped at the time budget): call again to resume; fast_p "
                     "counts them as not validated")
    if interp:
        notes.append("validated under Triton's CPU interpreter (sizes shrunk or as given); the full size was not run, "
                     "and there are no timings: fast_p for p > 0 needs a GPU")
    elif not s.benchmark:
        notes.append("benchmark=false: no timings")
    if any(r.kernelbench == "skipped" for r in rows if r.verdict != "no candidate") and s.kernelbench:
        notes.append("KernelBench criterion skipped where no GPU and no sizes were known (it runs get_inputs() as is)")
    fp = _fast_p(rows, n_problems, timed)
    rep = SuiteReport(ok=not counts.get("error") and not counts.get("not run"), name=name, directory=directory, layout=layout,
                      problems=n_problems, rows=rows, counts=counts, fast_p=fp,
                      kernelbench_fast_0=round(len(kb_problems) / n_problems, 4) if n_problems and s.kernelbench
                      else None, caught_by_stricter_checks=caught, spread=spread, interpreter=interp, notes=notes,
                      runtime={"sandbox": "; ".join(s.sandboxes) or "not used: no unit ran in this call (all resumed "
                               "from the journal)"})
    f0 = fp.get("eager", {}).get("0")
    head = (f"run_suite {name}: {n_problems} problems, {len(rows)} candidates: {counts.get('pass', 0)} pass, "
            f"{counts.get('fail', 0)} fail, {counts.get('error', 0)} error ({counts['resumed']} resumed from the "
            f"journal); fast_0 {_fmt(f0, '.2f')}")
    lines = [head]
    robust = [r for r in rows if r.verdict == "pass" and r.robustness]
    if robust:
        lines.append(f"  {len(robust)} passing candidate(s) not robust to inputs their problem never produces "
                     "(reported, not counted; strict=true counts them): " + ", ".join(
                         f"{r.problem}/{r.candidate} ({', '.join(r.robustness)})" for r in robust[:8]))
    for base, vals in fp.items():
        lines.append(f"  fast_p vs {base}: " + ", ".join(f"p={k}: {_fmt(v, '.2f')}" for k, v in vals.items()))
    if rep.kernelbench_fast_0 is not None:
        lines.append(f"  KernelBench's criterion alone would give fast_0 {rep.kernelbench_fast_0:.2f}; caught only by "
                     f"the stricter checks: {', '.join(caught) or 'none'}")
    for r in rows:
        if r.verdict in ("fail", "error"):
            lines.append(f"  {r.verdict.upper()} {r.problem}/{r.candidate}: {r.message[:160]}")
    lines.append(f"  spread: {desc}")
    rep.summary = "\n".join(lines)
    return rep


def _write_outputs(rep: SuiteReport, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        rep.plot = _plot(rep, out_dir / "speedups.png")
    except Exception as e:  # noqa: BLE001 - a plotting problem must not cost the suite's results
        rep.notes.append(f"plot failed: {type(e).__name__}: {e}")
    rep.markdown = render_markdown(rep)
    md = out_dir / "report.md"
    atomic_write(md, rep.markdown)
    rep.markdown_file = str(md)
    res = out_dir / "report.json"
    rep.results_file = str(res)
    atomic_write(res, rep.model_dump_json(indent=2))


def _plot(rep: SuiteReport, path: Path) -> str | None:
    """PNG: each problem's best speedup vs eager and vs torch.compile (sorted), and fast_p as p grows."""
    best: dict[str, dict[str, float]] = {}
    for r in rep.rows:
        if r.verdict != "pass" or not r.timed:
            continue
        for base, attr in BASELINES:
            v = getattr(r, attr)
            if v:
                best.setdefault(base, {})[r.problem] = max(v, best.get(base, {}).get(r.problem, 0.0))
    if not best:
        return None
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        rep.notes.append("plot skipped: matplotlib is not installed (pip install 'pytorch-to-triton[plot]')")
        return None
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for base, vals in best.items():
        ys = sorted(vals.values(), reverse=True)
        axes[0].plot(range(1, len(ys) + 1), ys, marker="o", label=f"vs {base}")
        top = max(2.5, max(ys) * 1.1)
        ps = [i * top / 200 for i in range(201)]
        axes[1].plot(ps, [sum(v > p for v in ys) / max(1, rep.problems) for p in ps], label=f"vs {base}")
    axes[0].axhline(1.0, color="gray", ls="--", lw=1)
    axes[0].set_yscale("log")
    speedup_fmt = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}×")
    axes[0].yaxis.set_major_formatter(speedup_fmt)
    axes[0].yaxis.set_minor_formatter(speedup_fmt)
    axes[0].set_xlabel("problems, sorted by speedup")
    axes[0].xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    axes[0].set_ylabel("speedup (best validated candidate)")
    for p in FAST_P[1:]:
        axes[1].axvline(p, color="gray", ls=":", lw=1)
    axes[1].set_xlabel("p")
    axes[1].set_ylabel("fast_p (timed problems)")  # the table's fast_0 also counts correct, untimed ones
    axes[1].set_ylim(0, 1.05)
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"suite {rep.name}: {rep.problems} problems")
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)
    return str(path)
