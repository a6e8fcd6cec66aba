"""The run journal: one JSONL per task under .pytorch-to-triton/journal/, rendered as a markdown table."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

from .errors import UsageError
from .workspace import atomic_write

_LOCK = threading.Lock()


def journal_dir(root: Path) -> Path:
    return Path(root) / ".pytorch-to-triton" / "journal"


def task_id(reference: Path, root: Path) -> str:
    """A stable slug for a task: the reference's path inside the workspace (examples/softmax/reference.py ->
    examples-softmax)."""
    try:
        rel = Path(reference).resolve().relative_to(Path(root).resolve())
    except ValueError:
        rel = Path(Path(reference).name)
    parts = list(rel.with_suffix("").parts)
    if len(parts) > 1 and parts[-1] in ("reference", "ref"):
        parts = parts[:-1]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(parts)).strip("-.") or "task"


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


def read_entries(root: Path, task: str) -> list[dict[str, Any]]:
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
    d = journal_dir(root)
    return sorted(p.stem for p in d.glob("*.jsonl")) if d.is_dir() else []


def _fmt(v: Any, spec: str, suffix: str = "") -> str:
    return "–" if v is None else f"{v:{spec}}{suffix}"


def render_report(root: Path, task: str) -> str:
    """Stage by stage: the latest validation verdict, benchmark figures and audit counts."""
    entries = read_entries(root, task)
    stages: dict[str, dict[str, Any]] = {}
    plot = None
    for e in entries:
        row = stages.setdefault(e.get("stage", "?"), {})
        tool = e.get("tool")
        if tool == "run_validation":
            row["validation"] = ("PASS" if e.get("ok") else "FAIL") + (" (interpreter)" if e.get("interpreter") else "")
        elif tool == "run_benchmark":
            row.update({k: e.get(k) for k in ("median_ms", "speedup_vs_eager", "speedup_vs_compile", "pct_peak_bw",
                                              "case")})
            plot = e.get("plot") or plot
        elif tool == "audit_kernel":
            c = e.get("audit_counts") or {}
            row["audit"] = f"P0 {c.get('P0', 0)} / P1 {c.get('P1', 0)} / P2 {c.get('P2', 0)}"
    lines = [f"# Run journal: {task}", "", f"{len(entries)} tool calls recorded.", "",
             "| stage | validation | median ms | vs eager | vs torch.compile | % peak BW | audit |",
             "|---|---|---|---|---|---|---|"]
    for stage, r in stages.items():
        lines.append(f"| {stage} | {r.get('validation', '–')} | {_fmt(r.get('median_ms'), '.4f')} | "
                     f"{_fmt(r.get('speedup_vs_eager'), '.2f', '×')} | {_fmt(r.get('speedup_vs_compile'), '.2f', '×')} | "
                     f"{_fmt(r.get('pct_peak_bw'), '.1f', '%')} | {r.get('audit', '–')} |")
    if plot:
        lines += ["", f"![benchmark plot]({plot})"]
    return "\n".join(lines) + "\n"
