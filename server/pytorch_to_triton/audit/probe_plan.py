"""Where the probes' example call comes from, and the reproducer line each failure carries (server side, no torch).

The example call, first found wins (issue 45, part 3): the tool's `harness=`; the sidecar's `[audit] harness` (a path
beside the sidecar); the task reference the audited file belongs to (its make_inputs, the candidate's entry); a
KernelBench problem beside a file that defines ModelNew; then the file's own callers and its package's, in the order
audit/discover.py lists them, which the worker runs until one calls an entry (worker/probe/callers.py). The sidecar
is the task reference's (`reference.p2t.toml`) or, for a file outside a task, the audited file's own (`<stem>.p2t.toml`
beside it). The report says which one was used ("example call: tests in the file: test_softmax(M=1823, N=781)"), or
what was searched; with none, each static suspect keeps its line and gets the one command that would confirm it.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import discover
from .hypotheses import hypothesis
from .model import AuditReport

HOW = ("pass harness= (a file with make_inputs(case) and ENTRY = \"<entry>\", references/audit-guide.md 'Probes'), "
       "or add [audit] harness = ... to the task sidecar")
NO_HARNESS = f"no example call: {HOW}"


@dataclass
class ProbePlan:
    """The worker op's arguments, or why the probes cannot run; the accepted disputes either way."""

    args: dict[str, Any] | None
    why_not: str = ""
    accept: list[dict[str, Any]] = field(default_factory=list)
    display: dict[str, str] = field(default_factory=dict)  # workspace-relative paths for the reproducer
    example: str = ""  # the example call the plan chose, in words (a caller's: set by used() from the worker)
    found: discover.Found | None = None  # the search, when it ran (no harness given)

    def reproducer(self, probe: str, variant: str) -> str:
        """One line the user runs from the workspace root: exits 1 while the variant still fails."""
        if not self.args:
            return ""
        example = ["--caller", self.display["caller"]] if self.display.get("caller") else \
            ["--harness", self.display["harness"]]
        cmd = ["python", "-m", "pytorch_to_triton.probe_repro", self.display["target"], *example]
        if self.args.get("entry"):
            cmd += ["--entry", self.args["entry"]]
        if self.args.get("shape") is not None:
            cmd += ["--shape", json.dumps(self.args["shape"], separators=(",", ":"))]
        if self.args.get("dtype") and self.args["dtype"] != "float32" and not self.display.get("caller"):
            cmd += ["--dtype", self.args["dtype"]]
        return " ".join(shlex.quote(c) for c in cmd + ["--only", f"{probe}: {variant}"])

    def used(self, report: AuditReport, res: dict[str, Any]) -> str:
        """After the worker's run: say which example call the probes used (report.checked); '' or, when no caller
        gave one, why (the probes then did not run)."""
        if res.get("no_example"):
            searched = f" (searched: {'; '.join(self.found.searched)})" if self.found else ""
            return f"{res['no_example']}{searched}; {HOW}"
        ex = res.get("example")
        if ex:
            self.display["caller"] = ex["spec"]
            self.example = f"{ex['label']}; it calls {ex['call']}"
        if self.example:
            report.checked.append(f"example call: {self.example}")
        return ""

    def confirm(self, report: AuditReport) -> None:
        """With no example call, each static suspect of wrong results (a P2 'verify:') gets the one command that
        would confirm it: the audit with harness= and what to put in that harness."""
        if self.args is not None and report.probes:
            return
        target = self.display.get("target") or report.file
        stem = Path(target).stem
        for f in report.findings:
            h = hypothesis(f.id)
            if h is None or f.reproducer or not f.why.startswith("verify:"):
                continue
            entry, params = self._entry_for(f.function)
            f.reproducer = (f"pytorch-to-triton audit {shlex.quote(target)} --harness {stem}_harness.py  "
                            f"# {stem}_harness.py: ENTRY = \"{entry}\", AUDIT_SHAPE = a size its callers use, and "
                            f"make_inputs(case) returning {entry}'s arguments ({', '.join(params) or '...'}) as its "
                            f"callers build them at case.shape in case.dtype; the probes then try {h.inputs}")

    def _entry_for(self, function: str | None) -> tuple[str, list[str]]:
        """The entry that reaches `function` (the first of the file's, else '<entry>') and its parameters."""
        ents = self.found.entries if self.found else []
        model = self.found.model if self.found else None
        if model is None or not ents:
            return "<entry>", []
        from .reach import reachable

        def qual(e: str) -> str:
            return e.replace(".apply", ".forward")

        hit = next((e for e in ents if function and function in reachable(model, [qual(e)])), ents[0])
        fn = model.funcs.get(qual(hit))
        params = [p for p in (fn.params if fn else []) if p not in ("self", "ctx", "cls")]
        return (hit.removesuffix(".forward") if hit.endswith(".forward") else hit), params


def plan(target: Path, rel: Any, harness: Path | None, task_ref: Path | None, table: dict[str, Any] | None,
         table_dir: Path | None, budget_s: float, root: Path | None = None) -> ProbePlan:
    """The probe request for `target`; `rel(path)` makes a path workspace-relative for the reproducer. With `root`
    (the workspace: the file is on disk) and no harness, the file's own callers and its package's are searched."""
    table = table or {}
    accept = list(table.get("accept", []))
    said = f"harness={rel(harness)}" if harness is not None else ""
    if harness is None and table.get("harness") and table_dir is not None:
        harness = (table_dir / table["harness"]).resolve()
        if not harness.is_file():
            return ProbePlan(None, f"[audit] harness {table['harness']!r} not found beside the sidecar ({harness})",
                             accept)
        said = f"the sidecar's [audit] harness: {rel(harness)}"
    found, skipped = None, ""
    if harness is None and task_ref is not None and task_ref.resolve() != target.resolve():
        if discover.harness_form(task_ref) or root is None:
            harness, said = task_ref, f"the task reference: {rel(task_ref)}"
        else:  # a package's own reference.py beside the kernel: not an example call
            skipped = f"{rel(task_ref)} is neither a task reference (make_inputs) nor in KernelBench form"
    if harness is None and root is not None:
        try:
            found = discover.find(target, root)
        except Exception as e:  # noqa: BLE001 - the search must never cost the static report
            return ProbePlan(None, f"{NO_HARNESS} (the search for the file's callers failed: {type(e).__name__}: "
                                   f"{str(e)[:160]})", accept)
        if skipped:
            found.searched.insert(0, skipped)
        kb = next((s for s in found.sources if s.kind == "kernelbench"), None)
        if kb is not None:
            harness, said = kb.file, kb.label(rel, target)
    if harness is None and found is not None and found.usable():
        args = {"target": str(target), "harness": str(target), "caller": found.request(target, root, rel),
                "entry": None, "shape": None, "dtype": None, "budget_s": budget_s}
        return ProbePlan(args, "", accept, {"target": str(rel(target))}, found=found)
    if harness is None:
        why = f"{found.none_found(rel)}; {HOW}" if found is not None else NO_HARNESS
        return ProbePlan(None, why, accept, {"target": str(rel(target))}, found=found)
    args = {"target": str(target), "harness": str(harness), "entry": table.get("entry"), "shape": table.get("shape"),
            "dtype": table.get("dtype"), "budget_s": min(float(table.get("budget_s") or budget_s), budget_s)}
    return ProbePlan(args, "", accept, {"target": str(rel(target)), "harness": str(rel(harness))}, said, found)
