"""run_validation's verdict as audit findings (issue 45: one judge for "is this kernel right for this problem?").

Design. With a task reference (reference=, or the reference.py / sidecar Service._audit_task finds beside the file)
the audit's execution half IS the validator: Service.audit builds the very request Service.validate builds for
(reference, candidate = the audited file) through the one builder (Service._validation_request: sidecar merged under
the explicit arguments, same cases, sizes, tiers, tolerances, require, target GPUs, reproduce line) and runs worker op
"validate". This module maps its CandidateReport onto the audit report:
- every contract failure (severity "fail", whatever its check: mismatch, input_mutated, dtype_mismatch, nonfinite,
  nondeterministic, exception, target_compile at a contract size, pytorch_compute under all_triton, ...) is a P0
  named by the validator's check, with its case, message, fix and validate's reproduce line (--only-cases CASE);
  its line is the evidence's kernel line, else the static suspect it confirms, else the entry's;
- every robustness finding is a Robustness entry in the validator's words (kind, title, check, message, fix);
- its warnings (library_compute "... (allowed; require all_triton to forbid)", small PyTorch ops, spills) and its
  composition line go to the audit's `checked` lines verbatim.
evidence.weigh then applies the policy with a reference (`Validated` passed in): no static finding is P0 by itself
(a correctness suspect is P2 "verify:" unless a validator failure sits on its kernel line; an honesty finding defers
to the validator's composition verdict); the probes run after the validator within half its time, without the
variants it already ran (repeat, reference), and every probe failure is robustness (tier_rules.probe_kind), a P0
only where the sidecar requires that kind. Without a reference nothing here runs: the probes' evidence alone.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import tier_rules as tr
from .model import AuditReport, Finding, Robustness
from .target_findings import SEVERITY as COMPILE_SEVERITY
from .target_findings import checked_line

PROBE = "run_validation"  # Finding.probe of what the validator found
CATEGORY = {"nonfinite": "numerical_stability", "nan_propagation": "numerical_stability",
            "relative_mismatch": "numerical_stability", "input_mutated": "memory_access",
            "crashed": "memory_access", "cuda_fatal": "memory_access", "calls_reference": "best_practices",
            "pytorch_compute": "best_practices", "timer_patched": "best_practices", "no_triton_launch":
            "best_practices", "side_stream": "best_practices", "thread": "best_practices"}
# The static honesty checks (audit/honesty_checks.py) and the validator's checks that judge the same thing at run time.
HONESTY = {"pytorch_compute": ("pytorch_compute", "no_triton_launch", "calls_reference"),
           "try_except_fallback": ("pytorch_compute",), "no_kernel_launch": ("no_triton_launch",),
           "side_stream": ("side_stream",), "concurrency": ("thread",), "timer_patch": ("timer_patched",),
           "output_cache": ("stale_result", "no_triton_launch")}
ASSUMED = "assumed: the task's own inputs (run_validation's contract cases: the reference's SHAPES or sizes, the " \
          "sidecar's cases, require)"


@dataclass
class Validated:
    """run_validation's answer for the audited file: its candidate report (JSON), reproduce line and time."""

    candidate: dict[str, Any]
    reproduce: str
    seconds: float
    exact_lines: set[int] = field(default_factory=set)  # lines a failure's evidence names (add() fills it)

    @property
    def ok(self) -> bool:
        """It passed its contract cases."""
        return bool(self.candidate.get("ok"))

    @property
    def verdict(self) -> str:
        """validate's own line for it ("pass; not robust to: ...", or "fail")."""
        return str(self.candidate.get("verdict_line") or ("pass" if self.ok else "fail"))

    def failures(self) -> list[dict[str, Any]]:
        """The contract failures, in the validator's order (the first is the first to fix)."""
        return [f for f in self.candidate.get("findings") or [] if f.get("severity") == "fail"]

    def broke_early(self) -> bool:
        """The candidate never ran a case (it failed to import, or the worker died first): probes would only repeat
        that."""
        err = self.candidate.get("error") or {}
        return err.get("phase") == "import" or not self.candidate.get("cases")

    def reproducer(self, case: Any, strict: bool = False) -> str:
        """validate's reproduce line narrowed to the case (and --strict for a robustness case): exits 1 while it
        fails."""
        cmd = shlex.split(self.reproduce)
        # "odd:grad", "odd:new_values" rerun with case odd; a layout variant ("shrunk:strided") only under its own
        # label: --only-cases shrunk runs no layout variant, and a robustness reproducer would pass
        name, _, suffix = str(case or "").partition(":")
        base = f"{name.strip()}:{suffix}" if suffix in tr.LAYOUT_VARIANTS else name.strip()
        if base and " " not in base and base not in ("import", "-") and "--only-cases" not in cmd:
            cmd += ["--only-cases", base]
        if strict and "--strict" not in cmd:
            cmd.append("--strict")
        return shlex.join(cmd)


def _text(evidence: Any) -> str:
    if isinstance(evidence, dict):
        keep = {k: v for k, v in evidence.items() if k not in ("traceback", "stderr_tail") and v not in (None, "")}
        return ", ".join(f"{k}={v}" for k, v in list(keep.items())[:8])
    return "" if evidence is None else str(evidence)


def _line(f: dict[str, Any], report: AuditReport, launched: list[str]) -> tuple[int, str | None, bool]:
    """The kernel line the failure names in this file (exact), else the first launched kernel's definition, else 0."""
    ev = f.get("evidence") if isinstance(f.get("evidence"), dict) else {}
    where = ev.get("kernel_file") or ev.get("file")
    for key in ("kernel_line", "line"):
        if ev.get(key) and (where is None or Path(str(where)).name == Path(report.file).name):
            return int(ev[key]), ev.get("kernel_function") or ev.get("kernel"), True
    kernels = {k["name"]: int(k.get("line") or 0) for k in report.kernels}
    name = next((k for k in launched if k in kernels), None) or next(iter(kernels), None)
    return (kernels[name], name, False) if name else (0, None, False)


def add(report: AuditReport, v: Validated) -> None:
    """The validator's contract failures (P0), compile warnings (their target_findings severity), robustness
    findings, composition and other warnings (checked, in its words) onto the audit report."""
    cr = v.candidate
    launched = list(cr.get("launched_kernels") or [])
    for f in cr.get("findings") or []:
        check, case, msg = str(f.get("check")), f.get("case"), str(f.get("message") or "")
        if f.get("severity") != "fail" and (check, "warn") not in COMPILE_SEVERITY:
            report.checked.append(f"run_validation {check} ({case}): {msg}"[:400])  # library_compute "(allowed)"...
            continue
        sev, cat = ("P0", CATEGORY.get(check, "correctness")) if f.get("severity") == "fail" else \
            COMPILE_SEVERITY[(check, "warn")]
        line, fn, exact = _line(f, report, launched)
        if exact:
            v.exact_lines.add(line)
        count = f" ({f['count']} cases)" if int(f.get("count") or 1) > 1 else ""
        report.findings.append(Finding(
            id=check, category=cat, severity=sev, file=report.file, line=line, function=fn,  # type: ignore[arg-type]
            evidence=f"case {case}: {msg}{count}. {_text(f.get('evidence'))}"[:600],
            why=f"run_validation failed {check} on case {case}: {msg}"[:600] if sev == "P0" else msg[:600],
            fix=str(f.get("fix") or ""), reproducer=v.reproducer(case) if sev == "P0" else "", probe=PROBE,
            assumed=ASSUMED))
    for r in cr.get("robustness") or []:
        kind = str(r.get("kind") or "other")
        report.robustness.append(Robustness(
            kind=kind, title=str(r.get("title") or tr.title(kind)), check=str(r.get("check")),
            message=str(r.get("message") or "")[:600], case=str(r.get("case") or ""),
            evidence=_text(r.get("evidence"))[:600], fix=str(r.get("fix") or tr.fix(kind)),
            reproducer=v.reproducer(r.get("case"), strict=True), assumed=f"{ASSUMED}; {tr.title(kind)}: robustness"))
    comp = cr.get("composition") or {}
    if comp.get("line"):
        report.checked.append(f"composition (run_validation): {comp['line']}")
    if isinstance(cr.get("target_compile"), dict) and cr["target_compile"].get("rows"):
        report.checked.append(checked_line(cr["target_compile"]) + " (run_validation's cases)")
    n = [c for c in cr.get("cases") or [] if c.get("tier", tr.CONTRACT) == tr.CONTRACT]
    report.checked.append(f"run_validation: {v.verdict} ({sum(bool(c.get('ok')) for c in n)}/{len(n)} contract "
                          f"cases, {v.seconds:.0f} s); reproduce: {v.reproduce}")


def merge_static(report: AuditReport, v: Validated) -> None:
    """With the validator's verdict, no static finding is a P0 by itself (issue 45): a static finding the validator's
    failure confirms (an honesty check it judged the same way, a suspect on the failing kernel line) gives that P0
    its line and evidence and is dropped; an honesty finding the validator passed is information, said with its
    verdict; any other static P0 is a P2 "verify:"."""
    failed = [f for f in report.findings if f.probe == PROBE and f.severity == "P0"]
    comp = next((c[len("composition (run_validation): "):] for c in report.checked
                 if c.startswith("composition (run_validation): ")), "")
    from .catalog import lookup
    from .hypotheses import hypothesis

    for f in list(report.findings):
        if f.probe:  # a probe's or the validator's own finding
            continue
        check = lookup(f.id)
        honesty = check is not None and check.scope == "honesty"
        hit = next((x for x in failed if x.id in HONESTY.get(f.id, ())), None) if honesty else next(
            (x for x in failed if x.line in v.exact_lines and abs(x.line - f.line) <= 1 and f.severity in ("P0", "P1")),
            None)
        if hit is not None:  # the run confirms it: one finding, the validator's, on the static line
            hit.line, hit.function = f.line, f.function or hit.function
            hit.evidence = f"{hit.evidence} | static {f.id} line {f.line}: {f.evidence}"[:600]
            report.findings.remove(f)
            continue
        if honesty and f.severity in ("P0", "P1") and not comp:  # no call finished: nothing judged it
            f.severity = "P2"
            f.why = f"verify: run_validation's cases failed before its composition could be judged. {f.why}"[:600]
        elif honesty and f.severity in ("P0", "P1"):  # a P2 note (code the entry never reaches) stays a note
            report.findings.remove(f)
            f.severity = "info"
            f.why = (f"run_validation ran the candidate and did not fail it for this ({v.verdict}"
                     + (f"; composition: {comp}" if comp else "") + f"). {f.why}")[:600]
            report.host_code.append(f)
        elif f.severity == "P0" and hypothesis(f.id) is None:  # a suspect of wrong results: weigh's hypotheses
            f.severity = "P2"
            f.why = f"verify: run_validation's contract cases did not show it ({v.verdict}). {f.why}"[:600]
