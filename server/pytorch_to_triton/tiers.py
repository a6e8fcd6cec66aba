"""The two-tier verdict as the reports read it (server side, no torch): contract cases decide pass/fail,
robustness findings stand beside the verdict ("pass; not robust to: non-contiguous input, empty dims").

The worker labels each case's tier and collects the robustness findings (worker/validation/cases.py, run_validation.py);
this module only words them for summaries and the journal.
"""

from __future__ import annotations

from typing import Any

from .schemas import CandidateReport
from .tier_rules import CONTRACT


def _tier(case: Any) -> str:
    return str((case.model_extra or {}).get("tier") or getattr(case, "tier", None) or CONTRACT)


def pass_line(r: CandidateReport) -> str:
    """'9/9 contract cases' plus the robustness cases and how many of them failed."""
    contract = [c for c in r.cases if _tier(c) == CONTRACT]
    robust = [c for c in r.cases if _tier(c) != CONTRACT]
    line = f"{sum(c.ok for c in contract)}/{len(contract)} contract cases"
    if robust:
        bad = sum(not c.ok for c in robust)
        line += f", {len(robust)} robustness case(s)" + (f" ({bad} failed)" if bad else "")
    return line


def titles(r: CandidateReport) -> list[str]:
    """The robustness kinds a candidate failed, in report order, without repeats."""
    return list(dict.fromkeys(f.title for f in r.robustness))


def robustness_lines(r: CandidateReport) -> list[str]:
    """One line per robustness finding: kind, check, case, and its fix."""
    return [f"  not robust to {f.title}: {f.check} on {f.case}: {f.message[:160]}; fix: {f.fix}"
            for f in r.robustness]


def not_robust_to(reports: list[CandidateReport]) -> str:
    """'; not robust to: ...' for the verdict line when any candidate has robustness findings, else ''."""
    seen = list(dict.fromkeys(t for r in reports for t in titles(r)))
    return f"; not robust to: {', '.join(seen)}" if seen else ""


def journal_fields(r: CandidateReport, required: list[str]) -> dict[str, Any]:
    """What the journal keeps of the tiers: the robustness kinds failed, what was required (strict), and the
    value cases that ran."""
    out: dict[str, Any] = {"robustness": titles(r)}
    if required:
        out["required"] = list(required)
    valued = list(dict.fromkeys(c.name for c in r.cases if c.values))
    if valued:
        out["value_cases"] = valued  # the cases of yours that changed input values (value recipes, hooks)
    return out
