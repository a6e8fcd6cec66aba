"""Markdown in the template of references/audit-guide.md."""

from __future__ import annotations

from .model import AuditReport


def render_markdown(report: AuditReport) -> str:
    """Summary verdict, findings table by priority, each fix, what was and was not checked."""
    c = report.counts
    out = [f"# Audit: {report.file}", "", f"**Verdict:** {report.verdict} (P0 {c.get('P0', 0)}, P1 {c.get('P1', 0)}, "
           f"P2 {c.get('P2', 0)})", "", "| # | severity | category | line | check | evidence |", "|---|---|---|---|---|---|"]
    for i, f in enumerate(report.findings, 1):
        ev = f.evidence.replace("|", "\\|")[:80]
        out.append(f"| {i} | {f.severity} | {f.category} | {f.line} | {f.id} | `{ev}` |")
    out.append("")
    for i, f in enumerate(report.findings, 1):
        out += [f"## {i}. {f.id} ({f.severity}, {f.category}, line {f.line})", "", f"Why: {f.why}", "",
                f"Fix: {f.fix}", ""]
        if f.snippet:
            out += ["```python", f.snippet, "```", ""]
    out.append("Checked: " + ", ".join(report.checked))
    for n in report.not_checked:
        out.append(f"Not checked: {n}")
    return "\n".join(out)
