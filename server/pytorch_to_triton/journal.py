"""The run journal: one JSONL per task under .pytorch-to-triton/journal/, rendered as a markdown table.

Each entry records the sha256 of the files it ran (reference, candidate, task sidecar), so the report can tell a
result about the files as they are now from one about an older version ("stale"). A task is its reference: the
folder of a reference.py, or the reference file's own path; validations, benchmarks and audits of one task (an
audit of a file inside a task folder included) land in one journal.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path
from typing import Any

from .errors import UsageError
from .workspace import atomic_write

_LOCK = threading.Lock()
_REFERENCE_NAMES = ("reference", "ref")


def journal_dir(root: Path) -> Path:
    """Where the per-task JSONL files live."""
    return Path(root) / ".pytorch-to-triton" / "journal"


def task_id(reference: Path, root: Path) -> str:
    """A stable slug for a task: the reference's path inside the workspace (examples/softmax/reference.py ->
    examples-softmax)."""
    try:
        rel = Path(reference).resolve().relative_to(Path(root).resolve())
    except ValueError:
        rel = Path(Path(reference).name)
    parts = list(rel.with_suffix("").parts)
    if len(parts) > 1 and parts[-1] in _REFERENCE_NAMES:
        parts = parts[:-1]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(parts)).strip("-.") or "task"


def find_reference(path: Path) -> Path | None:
    """The reference of the task folder a file sits in: reference.py there, else the one *.p2t.toml's reference."""
    folder = Path(path).resolve().parent
    for name in _REFERENCE_NAMES:
        p = folder / f"{name}.py"
        if p.is_file() and p != Path(path).resolve():
            return p
    from .sidecar import SUFFIX, reference_for

    refs = [reference_for(s) for s in folder.glob(f"*{SUFFIX}")]
    refs = [r for r in refs if r.is_file() and r != Path(path).resolve()]
    return refs[0] if len(refs) == 1 else None


def sha256_file(path: Path) -> str | None:
    """sha256 of a file's bytes, None when it does not exist."""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def task_files(root: Path, reference: Path, candidate: Path) -> list[Path]:
    """The files a result depends on: reference, candidate, the reference's sidecar, and the user's model file
    that a scaffolded reference imports (the sidecar's `source = "path/model.py:Class"`)."""
    from .scaffold import split_spec
    from .sidecar import load, path_for

    files = [Path(reference), Path(candidate), path_for(reference)]
    try:
        side = load(Path(reference))
        path, cls = split_spec(side.source) if side is not None and side.source else ("", None)
    except UsageError:  # a bad sidecar is the tool's error to report, not the journal's
        return files
    model = (Path(root) / path).resolve()
    if cls and model.is_file() and Path(root).resolve() in model.parents:
        files.append(model)
    return files


def content_key(root: Path, paths: list[Path], tool: str | None = None) -> dict[str, Any]:
    """{'files': {relative path: sha256 or None when absent}, 'key': sha256 over them}.

    An absent file is recorded too (a sidecar written after the run changes what a run would use). With `tool`, the
    task sidecar is keyed on the settings that tool reads (journal_keys.py), not its bytes: editing notes or [bench]
    leaves a validation current; 'sidecar_sections' then holds per-section digests to name what changed."""
    from . import journal_keys
    from .sidecar import SUFFIX

    files: dict[str, str | None] = {}
    out: dict[str, Any] = {}
    for p in paths:
        try:
            rel = str(Path(p).resolve().relative_to(Path(root).resolve()))
        except ValueError:
            rel = str(p)
        if tool is not None and rel.endswith(SUFFIX):
            files[rel], out["sidecar_sections"] = journal_keys.settings_key(Path(p), tool)
        else:
            files[rel] = sha256_file(p)
    key = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    return {"files": files, "key": key, **out}


def changed_files(root: Path, entry: dict[str, Any]) -> list[str]:
    """The files of an entry whose content differs now (or which are gone); [] for an entry without hashes."""
    from . import journal_keys

    out = []
    for rel, digest in (entry.get("files") or {}).items():
        if journal_keys.is_settings_key(digest):
            tool = str(entry.get("tool", ""))
            now_key, _ = journal_keys.settings_key(Path(root) / rel, tool)
            if now_key != digest:
                out.append(journal_keys.describe_change(Path(rel).name, entry.get("sidecar_sections") or {},
                                                        Path(root) / rel, tool))
            continue
        now = sha256_file(Path(root) / rel)
        if now != digest:
            out.append(f"{Path(rel).name} {'deleted' if now is None else 'added' if digest is None else 'changed'}")
    return out


def stage_file_gone(root: Path, entry: dict[str, Any]) -> bool:
    """True when the file a row is about (its stage) no longer exists: the report keeps no row for it."""
    stage = entry.get("file") or entry.get("stage")
    if not stage:
        return False
    files = entry.get("files") or {}
    rel = stage if stage in files else next((r for r in files if Path(r).name == Path(stage).name), None)
    return rel is not None and not (Path(root) / rel).exists()


def _path(root: Path, task: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", task or "") or task.startswith("."):
        raise UsageError(f"task {task!r} is not a journal name; use one of: {', '.join(list_tasks(root)) or 'none yet'}")
    return journal_dir(root) / f"{task}.jsonl"


def append_entry(root: Path, task: str, entry: dict[str, Any]) -> Path:
    """Append one entry. The whole file is rewritten atomically, so a crash leaves the previous good copy."""
    path = _path(root, task)
    line = json.dumps(entry, default=str, sort_keys=True)
    with _LOCK:
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old and not old.endswith("\n"):
            old += "\n"
        atomic_write(path, old + line + "\n")
    return path


def cases_path(root: Path, task: str) -> Path:
    """Where the finished cases of validations are logged one by one (case_journal.py): a validation killed by its
    caller leaves the cases it finished here, each line complete."""
    return _path(root, task).parent / "cases" / f"{task}.jsonl"


def append_case(root: Path, task: str, record: dict[str, Any]) -> None:
    """Append one finished case (a plain append and flush: a kill mid-call loses nothing already written)."""
    path = cases_path(root, task)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _LOCK, path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record, default=str, sort_keys=True) + "\n")
        f.flush()


def read_cases(root: Path, task: str, call: str | None = None) -> list[dict[str, Any]]:
    """The logged cases of a task (of one call when `call` is given), oldest first."""
    path = cases_path(root, task)
    if not path.exists():
        return []
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if call is None or rec.get("call") == call:
            out.append(rec)
    return out


def read_entries(root: Path, task: str) -> list[dict[str, Any]]:
    """Every entry of a task's journal, oldest first (unreadable lines skipped)."""
    path = _path(root, task)
    if not path.exists():
        raise UsageError(f"no journal for task {task!r}; known tasks: {', '.join(list_tasks(root)) or 'none yet'}")
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(raw))
        except json.JSONDecodeError:
            continue
    return out


def list_tasks(root: Path) -> list[str]:
    """The tasks that have a journal."""
    d = journal_dir(root)
    return sorted(p.stem for p in d.glob("*.jsonl")) if d.is_dir() else []


def _fmt(v: Any, spec: str, suffix: str = "") -> str:
    return "–" if v is None else f"{v:{spec}}{suffix}"


def _current(root: Path, entries: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """The latest entry about the files as they are now, else the latest one and what changed since."""
    for e in reversed(entries):
        if "files" in e and not changed_files(root, e):
            return e, []
    return entries[-1], changed_files(root, entries[-1])


def _stale(changed: list[str]) -> str:
    return f" **stale** ({', '.join(changed)})" if changed else ""


def _notes(root: Path, entries: list[dict[str, Any]]) -> str:
    ref = next((e.get("reference") for e in reversed(entries) if e.get("reference")), None)
    if not ref:
        return ""
    from .sidecar import load

    try:
        side = load(Path(root) / ref)
    except UsageError as e:
        return f"sidecar: {e}"
    return side.notes if side is not None else ""


def _what_ran(stage: str, e: dict[str, Any]) -> list[str]:
    """One bullet per validation row: the extra cases (sidecar or arguments) and the sidecar settings it used."""
    parts = []
    if e.get("extra_cases"):
        parts.append("extra cases " + ", ".join(map(str, e["extra_cases"])))
    if e.get("sidecar_used"):
        parts.append("sidecar: " + "; ".join(map(str, e["sidecar_used"])))
    if e.get("checks"):
        parts.append("checks: " + ", ".join(f"{k} {v}" for k, v in e["checks"].items()))
    return [f"- {stage}: " + "; ".join(parts)] if parts else []


def render_report(root: Path, task: str, gpu: str | None = None) -> str:
    """Stage by stage: the validation verdict, benchmark figures and audit counts for the files as they are now;
    where run_benchmark had no GPU, its roofline ESTIMATE per stage on `gpu` (default H200)."""
    entries = read_entries(root, task)
    by_stage: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for e in entries:
        by_stage.setdefault(e.get("stage", "?"), {}).setdefault(e.get("tool", "?"), []).append(e)
    lines = [f"# Run journal: {task}", ""]
    ref = next((e.get("reference") for e in reversed(entries) if e.get("reference")), None)
    if ref:
        lines.append(f"Reference: `{ref}`. {len(entries)} tool calls recorded.")
    else:
        lines.append(f"{len(entries)} tool calls recorded.")
    notes = _notes(root, entries)
    if notes:
        lines += ["", "Notes (task sidecar):", "", *(f"> {n}" if n else ">" for n in notes.splitlines())]
    lines += ["", "| stage | validation | median ms | vs eager | vs torch.compile | % peak BW | % peak FLOPs | audit |",
              "|---|---|---|---|---|---|---|---|"]
    plot = None
    any_stale = False
    gone: list[str] = []
    ran: list[str] = []
    estimates: list[tuple[str, dict[str, Any]]] = []
    for stage, tools in by_stage.items():
        if stage_file_gone(root, [e for es in tools.values() for e in es][-1]):
            gone.append(stage)
            continue
        val = audit = "–"
        bench = ""
        b: dict[str, Any] = {}
        if "run_validation" in tools:
            # A run of a few cases (--only-cases) does not replace a whole validation of the same files: the
            # stage's verdict is the latest current full run; the subset run is listed under it.
            full = [x for x in tools["run_validation"] if not x.get("only_cases") and not x.get("interrupted")]
            e, changed = _current(root, full or tools["run_validation"])
            if full and changed == [] and tools["run_validation"][-1] is not e:
                last = tools["run_validation"][-1]
                if not changed_files(root, last) and last.get("interrupted"):
                    ran.append(f"- {stage}: later, interrupted by its caller after {last.get('cases_done', 0)} "
                               f"case(s) ({last.get('cases_failed', 0)} failed; {last.get('cases_file', '')})")
                elif not changed_files(root, last):
                    ran.append(f"- {stage}: later, only {', '.join(map(str, last['only_cases']))}: "
                               f"{'PASS' if last.get('ok') else 'FAIL'}")
            sizes = e.get("sizes_not_full")  # a KernelBench task validated at other sizes than its own
            at = f" at {', '.join(f'{k}={v}' for k, v in sizes.items())} (not full size)" if sizes else ""
            robust = e.get("robustness") or []  # beside the verdict: inputs the problem never produces
            extra = (f"; not robust to: {', '.join(robust)}" if robust else "") + (
                f"; value cases: {', '.join(e['value_cases'])}" if e.get("value_cases") else "") + (
                f" (required: {', '.join(e['required'])})" if e.get("required") else "")
            val = ("PASS" if e.get("ok") else "FAIL") + (" (interpreter)" if e.get("interpreter") else "") + at + \
                extra + _stale(changed)
            if e.get("interrupted"):  # no verdict: its caller stopped it; the finished cases are in the case log
                val = f"INTERRUPTED after {e.get('cases_done', 0)} case(s), {e.get('cases_failed', 0)} failed" + \
                    _stale(changed)
            any_stale |= bool(changed)
            ran += _what_ran(stage, e)
        if "roofline_estimate" in tools:
            e, changed = _current(root, tools["roofline_estimate"])
            estimates.append((stage + _stale(changed), e))
            any_stale |= bool(changed)
        if "run_benchmark" in tools:
            b, changed = _current(root, tools["run_benchmark"])
            bench = _stale(changed)
            any_stale |= bool(changed)
            plot = b.get("plot") or plot
        if "audit_kernel" in tools:
            e, changed = _current(root, tools["audit_kernel"])
            c = e.get("audit_counts") or {}
            audit = f"P0 {c.get('P0', 0)} / P1 {c.get('P1', 0)} / P2 {c.get('P2', 0)}" + _stale(changed)
            any_stale |= bool(changed)
        lines.append(f"| {stage} | {val} | {_fmt(b.get('median_ms'), '.4f')}{bench} | "
                     f"{_fmt(b.get('speedup_vs_eager'), '.2f', '×')} | {_fmt(b.get('speedup_vs_compile'), '.2f', '×')} | "
                     f"{_fmt(b.get('pct_peak_bw'), '.1f', '%')} | {_fmt(b.get('pct_peak_flops'), '.1f', '%')} | "
                     f"{audit} |")
    if estimates:
        from .roofline_estimate import report_lines

        lines += report_lines(estimates, gpu)
    if ran:
        lines += ["", "What the validations above ran (extra cases and task-sidecar settings):", "", *ran]
    if gone:
        lines += ["", f"No row for {', '.join(gone)}: the file is gone (its results stay in the journal file)."]
    if any_stale:
        lines += ["", "**stale**: what its parentheses name (a file, or a task-sidecar setting that tool reads) changed "
                  "since that result; run the tool again on the current files before quoting it."]
    if plot:
        lines += ["", f"![benchmark plot]({plot})"]
    return "\n".join(lines) + "\n"
