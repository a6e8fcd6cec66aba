"""Markdown in the template of references/audit-guide.md (section "Report template")."""

from __future__ import annotations

from .catalog import lookup
from .model import AuditReport

SECTIONS = ("## Summary", "## Findings by priority", "## Fixes", "## Host code", "## What was checked", "## Not checked")


def render_markdown(report: AuditReport) -> str:
    """Verdict, summary, findings table by priority, each fix with its snippet, what was and was not checked."""
    c = report.counts
    out = [f"# Audit: {report.file}", "",
           f"**Verdict:** {report.verdict} (P0 {c.get('P0', 0)}, P1 {c.get('P1', 0)}, P2 {c.get('P2', 0)})", ""]
    out += [SECTIONS[0], "", _summary(report), ""]
    out += [SECTIONS[1], ""]
    if report.findings:
        out += ["| # | severity | category | line | check | evidence |", "|---|---|---|---|---|---|"]
        for i, f in enumerate(report.findings, 1):
            ev = f.evidence.replace("|", "\\|").replace("`", "'")[:80]
            out.append(f"| {i} | {f.severity} | {f.category} | {f.line} | {f.id} | `{ev}` |")
    else:
        out.append("No findings.")
    if report.accepted:  # disputed in the task sidecar ([audit] accept), with the reason: shown, not counted
        out += ["", "Accepted (disputed in the task sidecar, not counted):", ""]
        out += [f"- line {f.line} `{f.id}` ({f.severity}): {f.accepted}" for f in report.accepted]
    out += ["", SECTIONS[2], ""]
    for i, f in enumerate(report.findings, 1):
        where = f"line {f.line}" + (f", {f.function}" if f.function else "")
        out += [f"### {i}. {f.id} ({f.severity}, {f.category}, {where})", ""]
        if f.evidence:
            out += [f"Evidence: `{f.evidence.replace('`', chr(39))}`", ""]
        out += [f"Why: {f.why}", "", f"Fix: {f.fix}", ""]
        if f.assumed and f.severity in ("P0", "P1"):
            out += [f"{f.assumed[0].upper()}{f.assumed[1:]} (dispute it: [audit] require / assume in the sidecar)", ""]
        if f.reproducer:
            out += ["Reproduce (exits 1 while it fails):", "", "```sh", f.reproducer, "```", ""]
        if f.snippet:
            out += ["```python", f.snippet, "```", ""]
    if not report.findings:
        out += ["Nothing to fix.", ""]
    if report.robustness:  # failures on inputs outside the contract: reported apart, never P0/P1 (issue 35)
        out += ["### Robustness (inputs outside the contract; not counted)", ""]
        for r in report.robustness:
            out += [f"- `{r.check}` ({r.title}) on {r.case}: {r.message[:300]} Fix: {r.fix} {r.assumed}"]
            if r.reproducer:
                out += [f"  Reproduce: `{r.reproducer}`"]
        out += ["", "A `[audit] require = [\"<kind>\"]` in the sidecar says the callers do give such inputs: their "
                "failures are then P0s.", ""]
    out += [SECTIONS[3], ""]
    if report.host_code and report.candidate:  # honesty checks run_validation settled by running it (issue 45)
        out += ["Honesty checks run_validation settled by running the candidate (information, not counted):", ""]
        out += [f"- line {f.line} `{f.id}`: `{f.evidence.replace('`', chr(39))[:80]}`: {f.why}" for f in report.host_code]
    elif report.host_code:  # honesty checks of a file that is not a benchmark candidate: information only
        out += ["Information about the host code (this file is not audited as a benchmark candidate, so these are "
                "not problems; pass reference= to judge them):", ""]
        for f in report.host_code:
            ev = f.evidence.replace("`", "'")[:80]
            check = lookup(f.id)  # the title, not the why: the why is written for a benchmark candidate
            out.append(f"- line {f.line} `{f.id}`{f' ({f.function})' if f.function else ''}: `{ev}`: "
                       f"{check.title if check else f.why}")
    else:
        out.append("Nothing noted." if not report.candidate else
                   "Audited as a benchmark candidate: honesty checks are in the findings above.")
    out += ["", SECTIONS[4], ""]
    if report.contract:
        out += ["The contract judged against (what the entry's callers give): " + "; ".join(report.contract), ""]
    for cid in report.checked:
        check = lookup(cid)
        out.append(f"- `{cid}`: {check.title}" if check else f"- `{cid}`")
    if report.probes:
        out += ["", "Probes (the entry run on inputs that expose the static suspects):", ""]
        out += [f"- {probe_line(p)}" for p in report.probes]
    out += ["", SECTIONS[5], ""]
    out += [f"- {n}" for n in report.not_checked] or ["- nothing listed"]
    return "\n".join(out) + "\n"


def _summary(report: AuditReport) -> str:
    kernels = [k["name"] for k in report.kernels]
    text = (f"{len(kernels)} @triton.jit function{'s' if len(kernels) != 1 else ''}"
            f"{' (' + ', '.join(kernels) + ')' if kernels else ''}, {len(report.findings)} finding"
            f"{'s' if len(report.findings) != 1 else ''}")
    cats = [f"{cat} {report.counts[cat]}" for cat in ("correctness", "numerical_stability", "memory_access",
                                                      "performance", "best_practices") if report.counts.get(cat)]
    if cats:
        text += " (" + ", ".join(cats) + ")"
    first = next((f for f in report.findings if f.severity == "P0"), None) or (report.findings[0]
                                                                              if report.findings else None)
    if first is not None:
        text += f". Fix first: {first.id} at line {first.line}."
    else:
        text += "."
    judged = next((c for c in report.checked if c.startswith("run_validation: ")), None)
    if judged:  # the task's validation ran: its verdict is the audit's correctness verdict (issue 45)
        text += f" Judged by {judged.split('; reproduce:')[0]}."
    if report.probes:
        ran = [p for p in report.probes if not p.get("not_run")]
        bad = [p["name"] for p in ran if p.get("failures")]
        text += (f" Probes: {len(ran)} of {len(report.probes)} ran"
                 + (f", failed: {', '.join(bad)}." if bad else ", none failed."))
    if report.host_code:
        text += f" Host code: {len(report.host_code)} note{'s' if len(report.host_code) != 1 else ''} (information)."
    return text


def probe_line(p: dict) -> str:
    """One probe in words: what it covers, what ran, what failed or why it did not run."""
    if p.get("not_run"):
        return f"`{p['name']}` not run: {p['not_run']} ({p['covered']})"
    ran, bad = p.get("ran", []), p.get("failures", [])
    text = f"`{p['name']}` ({p['covered']}): ran {', '.join(ran) or 'nothing'}"
    text += f"; FAILED {', '.join(f['variant'] for f in bad)}" if bad else "; passed"
    if p.get("notes"):
        text += "; " + "; ".join(p["notes"])[:300]
    return text
