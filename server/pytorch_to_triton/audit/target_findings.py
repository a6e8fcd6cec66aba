"""The CPU-side compile for the target GPU (worker/device/target_compile.py) as audit findings (issue 36).

The worker's judge() says what the compile rows show; here each becomes a Finding on the kernel's line:
- the kernel does not compile for the target: P0 (every call fails there; the compiler's message is the evidence);
- a config that cannot launch there (shared memory over the per-block limit, registers over the file): P0 when no
  autotuner can skip it, else P1 with the config named;
- spills: P1 with the config named;
- a deprecation Triton raised while compiling: P2 (best practices), with the Triton version that raised it.
"""

from __future__ import annotations

from typing import Any

from .model import AuditReport, Finding

SEVERITY = {("target_compile", "fail"): ("P0", "correctness"), ("target_resources", "fail"): ("P0", "correctness"),
            ("target_resources", "warn"): ("P1", "performance"), ("register_spills", "warn"): ("P1", "performance"),
            ("triton_portability", "warn"): ("P2", "best_practices")}
WHY = {"target_compile": "the interpreter runs the kernel as Python and accepted it; the GPU compiler refuses it, so "
                         "every call fails on the GPU",
       "target_resources": "the GPU refuses to launch a config that needs more than its shared memory or register "
                           "file (an autotuner skips it; a plain launch raises OutOfResources)",
       "register_spills": "spilled registers go to local memory (L1/L2/HBM) on every access",
       "triton_portability": "accepted with a warning by this Triton, an error from the release that removes it"}


def add(report: AuditReport, probed: dict[str, Any] | None) -> None:
    """Findings from probed["target_compile"] (the probes' launches compiled for the target on this CPU)."""
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
        report.findings.append(Finding(
            id=j["check"], category=cat, severity=sev, file=report.file, line=line, function=kernel,
            evidence=f"{j['message']} (compiled on this machine, no GPU)"[:600], why=WHY.get(j["check"], ""),
            fix=j["fix"]))
    done = f"compiled for {', '.join(section.get('targets') or [])} with Triton {section.get('triton_version')}: " \
           f"{section.get('specialisations')} specialisation(s), {len(section.get('rows') or [])} config(s)"
    report.checked.append(done)
    # the cubins' registers, spills and shared memory were read: "not checked" keeps only what they do not show
    report.not_checked = [n if not n.startswith("register pressure") else
                          "occupancy and vectorization beyond the cubins' registers, spills and shared memory "
                          "(compiled analysis, GPU with reference=)" for n in report.not_checked]
