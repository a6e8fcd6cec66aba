"""The audit's data: findings and the report."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Category = Literal["correctness", "performance", "memory_access", "numerical_stability", "best_practices"]
# "info": host-code notes of an audit that is not a benchmark candidate (AuditReport.host_code).
Severity = Literal["P0", "P1", "P2", "info"]


class Finding(BaseModel):
    """One problem: where, what, why it matters, how to fix it."""

    id: str
    category: Category
    severity: Severity
    file: str
    line: int
    function: str | None = None
    evidence: str = ""
    why: str = ""
    fix: str = ""
    snippet: str = ""
    # Issue 26: a probe's failing input as a command the user can run (exits 1 while it fails); the probe behind it.
    reproducer: str = ""
    probe: str = ""
    # The assistant's recorded dispute ([audit] accept in the task sidecar): the reason, shown and journalled.
    accepted: str = ""
    # Issue 35: the contract the finding was judged against, in one line a user can dispute ([audit] require/assume).
    assumed: str = ""


class Robustness(BaseModel):
    """A probe failure on an input outside the contract (tier_rules.py): reported apart, never a P0/P1."""

    kind: str  # the robustness kind (tier_rules.AUDIT_KINDS): what [audit] require names to make it contract
    title: str
    check: str  # probe_<name>_<kind>, as audit-guide.md names it
    message: str
    case: str = ""  # the failing variant (the reproducer's --only)
    evidence: str = ""
    fix: str = ""
    reproducer: str = ""
    assumed: str = ""


class AuditReport(BaseModel):
    """Everything audit_source found, sorted by priority."""

    file: str
    kernels: list[dict[str, Any]] = []
    findings: list[Finding] = []
    # Honesty checks of a file that is not a benchmark candidate: information about the host code (torch glue,
    # fallbacks, streams), never counted as problems. A candidate (ModelNew, or reference= given) gets them as findings.
    host_code: list[Finding] = []
    candidate: bool = False
    counts: dict[str, int] = {}
    verdict: str = ""
    checked: list[str] = []
    not_checked: list[str] = Field(default_factory=list)
    summary: str = ""
    # Issue 26: what each probe ran and saw (worker/probe/probes.py), and the findings disputed with a reason.
    probes: list[dict[str, Any]] = []
    accepted: list[Finding] = []
    # Issue 35: failures on inputs outside the contract (reported apart), and the contract itself, line by line.
    robustness: list[Robustness] = []
    contract: list[str] = []

    def finalize(self) -> AuditReport:
        """Sort findings, count them and write the verdict."""
        self.findings.sort(key=lambda f: (f.severity, f.line, f.id))
        self.host_code.sort(key=lambda f: (f.line, f.id))
        self.counts = {s: sum(f.severity == s for f in self.findings) for s in ("P0", "P1", "P2")}
        for f in self.findings:
            self.counts[f.category] = self.counts.get(f.category, 0) + 1
        if self.counts["P0"]:
            self.verdict = f"{self.counts['P0']} problem(s) that can give wrong results: fix the P0 findings first"
        elif self.counts["P1"]:
            self.verdict = "no wrong-result risks found; speed can improve (P1)"
        else:
            self.verdict = "no P0/P1 problems found"
        return self


def merge_compiled(report: AuditReport, facts: dict[str, Any], findings: list[Finding]) -> AuditReport:
    """Add compiled-analysis findings (GPU) to a static report; a finding without a snippet gets the catalog's."""
    from .catalog import lookup

    for f in findings:
        c = lookup(f.id)
        if c is not None and not f.snippet:
            f.snippet = c.snippet
    report.findings.extend(findings)
    if facts:
        report.checked.append(f"compiled:{facts.get('kernel', '?')}")
    return report.finalize()
