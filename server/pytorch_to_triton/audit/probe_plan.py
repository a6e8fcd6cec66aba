"""Where the probes' example call comes from, and the reproducer line each failure carries (server side, no torch).

The example call, first found wins: the tool's `harness=`; the sidecar's `[audit] harness` (a path beside the
sidecar); the task reference the audited file belongs to (its make_inputs, the candidate's entry). The sidecar is
the task reference's (`reference.p2t.toml`) or, for a file outside a task, the audited file's own
(`<stem>.p2t.toml` beside it).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NO_HARNESS = ("no example call: pass harness= (a file with make_inputs(case) and ENTRY = \"<entry>\", "
              "references/audit-guide.md 'Probes'), or add [audit] harness = ... to the task sidecar")


@dataclass
class ProbePlan:
    """The worker op's arguments, or why the probes cannot run; the accepted disputes either way."""

    args: dict[str, Any] | None
    why_not: str = ""
    accept: list[dict[str, Any]] = field(default_factory=list)
    display: dict[str, str] = field(default_factory=dict)  # workspace-relative paths for the reproducer

    def reproducer(self, probe: str, variant: str) -> str:
        """One line the user runs from the workspace root: exits 1 while the variant still fails."""
        if not self.args:
            return ""
        cmd = ["python", "-m", "pytorch_to_triton.worker.probe.probes", self.display["target"],
               "--harness", self.display["harness"]]
        if self.args.get("entry"):
            cmd += ["--entry", self.args["entry"]]
        if self.args.get("shape") is not None:
            cmd += ["--shape", _json(self.args["shape"])]
        if self.args.get("dtype") and self.args["dtype"] != "float32":
            cmd += ["--dtype", self.args["dtype"]]
        return " ".join(shlex.quote(c) for c in cmd + ["--only", f"{probe}: {variant}"])


def _json(v: Any) -> str:
    import json

    return json.dumps(v, separators=(",", ":"))


def plan(target: Path, rel: Any, harness: Path | None, task_ref: Path | None, table: dict[str, Any] | None,
         table_dir: Path | None, budget_s: float) -> ProbePlan:
    """The probe request for `target`; `rel(path)` makes a path workspace-relative for the reproducer."""
    table = table or {}
    accept = list(table.get("accept", []))
    if harness is None and table.get("harness") and table_dir is not None:
        harness = (table_dir / table["harness"]).resolve()
        if not harness.is_file():
            return ProbePlan(None, f"[audit] harness {table['harness']!r} not found beside the sidecar ({harness})",
                             accept)
    if harness is None and task_ref is not None and task_ref.resolve() != target.resolve():
        harness = task_ref
    if harness is None:
        return ProbePlan(None, NO_HARNESS, accept)
    args = {"target": str(target), "harness": str(harness), "entry": table.get("entry"), "shape": table.get("shape"),
            "dtype": table.get("dtype"), "budget_s": min(float(table.get("budget_s") or budget_s), budget_s)}
    return ProbePlan(args, "", accept, {"target": str(rel(target)), "harness": str(rel(harness))})
