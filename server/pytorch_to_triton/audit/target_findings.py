"""The CPU-side compile for the target GPU (worker/device/target_compile.py) as audit findings (issue 36).

The worker's judge() says what the compile rows show; here each becomes a Finding on the kernel's line:
- the kernel does not compile for the target: P0 (every call fails there; the compiler's message is the evidence);
- a config that cannot launch there (shared memory over the per-block limit, registers over the file): P0 when no
  autotuner can skip it, else P1 with the config named;
- spills: P1 with the config named;
- a deprecation Triton raised while compiling: P2 (best practices), with the Triton version that raised it.
Issue 45: each follows the tier of the sizes that launched its specialisation (the worker's LaunchRecorder.origin):
a failure of one only robustness calls launched (an empty batch's BLOCK of 0, a head dim of 17 against tl.arange)
is a robustness finding of that kind, a P0 only where the contract requires the kind (tier_rules.tier_of).
"""

from __future__ import annotations

from typing import Any

from .. import tier_rules as tr
from .model import AuditReport, Finding, Robustness

SEVERITY = {("target_compile", "fail"): ("P0", "correctness"), ("target_resources", "fail"): ("P0", "correctness"),
            ("target_resources", "warn"): ("P1", "performance"), ("register_spills", "warn"): ("P1", "performance"),
            ("triton_portability", "warn"): ("P2", "best_practices")}
WHY = {"target_compile": "the interpreter runs the kernel as Python and accepted it; the GPU compiler refuses it, so "
                         "every call fails on the GPU",
       "target_resources": "the GPU refuses to launch a config that needs more than its shared memory or register "
                           "file (an autotuner skips it; a plain launch raises OutOfResources)",
       "register_spills": "spilled registers go to local memory (L1/L2/HBM) on every access",
       "triton_portability": "accepted with a warning by this Triton, an error from the release that removes it"}


def checked_line(section: dict[str, Any]) -> str:
    """What the target compile covered, in one line for the report's checked list."""
    return (f"compiled for {', '.join(section.get('targets') or [])} with Triton {section.get('triton_version')}: "
            f"{section.get('specialisations')} specialisation(s), {len(section.get('rows') or [])} config(s)")


def add(report: AuditReport, probed: dict[str, Any] | None, require: Any = ()) -> None:
    """Findings from probed["target_compile"] (the probes' launches compiled for the target on this CPU); a robustness
    specialisation's failure goes to report.robustness unless `require` (the contract's kinds) covers its kind."""
    section = (probed or {}).get("target_compile")
    if not section or section.get("error"):
        if section and section.get("error"):
            report.not_checked.append(f"compile for the target GPU: {section['error']}")
        return
    from ..worker.device.target_compile import judge  # plain Python: no torch or triton behind it

    lines = {k["name"]: int(k.get("line") or 0) for k in report.kernels}
    for j in judge(section):
        sev, cat = SEVERITY.get((j["check"], j["severity"]), ("P2", "best_practices"))
        row = j["evidence"] if isinstance(j["evidence"], dict) else {}
        kernel = str(row.get("kernel") or j["message"].split(" ", 1)[0].rstrip(":"))
        line = int(row.get("line") or lines.get(kernel, 0))
        kind = j.get("kind")
        if j.get("tier", tr.CONTRACT) != tr.CONTRACT and tr.tier_of(kind, require) != tr.CONTRACT:
            if j["severity"] == "fail":  # a warning (spills) at a size no caller gives is not worth a line
                report.robustness.append(Robustness(
                    kind=str(kind), title=tr.title(str(kind)), check=j["check"], case=f"{kernel} line {line}",
                    message=f"{j['message']} (compiled on this machine, no GPU): only {tr.title(str(kind))} "
                            "launch this specialisation"[:600],
                    evidence=str(row.get("config") or "")[:600], fix=tr.fix(str(kind)) or j["fix"]))
            continue
        report.findings.append(Finding(
            id=j["check"], category=cat, severity=sev, file=report.file, line=line, function=kernel,
            evidence=f"{j['message']} (compiled on this machine, no GPU)"[:600], why=WHY.get(j["check"], ""),
            fix=j["fix"]))
    report.checked.append(checked_line(section))
    stale_compiled_notes(report)


def stale_compiled_notes(report: AuditReport) -> None:
    """The cubins' registers, spills and shared memory were read on this CPU: "not checked" keeps only what they do
    not show (issue 45: no "compiled analysis skipped: no GPU" where the target compile ran)."""
    gpu_only = ("occupancy and vectorization beyond the cubins' registers, spills and shared memory (compiled "
                "analysis of a real launch, on a GPU)")
    out = [gpu_only if n.startswith(("register pressure", "compiled analysis skipped", "occupancy and vectorization"))
           else n for n in report.not_checked]
    report.not_checked = list(dict.fromkeys(out))
