"""compute-sanitizer's word in the audit (issue 35, item 3): what worker/probe/sanitizer.py saw, as findings and verdicts.

- On a CUDA device, an invalid access (memcheck) or a shared-memory hazard (racecheck) reported on a contract input
  is a P0 whose line is the sanitizer's (the kernel line it names, on the file it names), with a reproducer that runs
  the variant under the sanitizer. The example call is always a contract input; another variant is one when its
  probe's failures count as P0 evidence (contract(): the one place the tiers of issue 35 item 1 decide it).
  A report the sanitizer made on another input is a P2 robustness note. A report on a variant that a probe finding
  already lists (the GPU saw a wrong or non-finite result there) is that finding's evidence, not a second finding.
- Every P0 that claims an out-of-bounds access gets the sanitizer's own verdict in its evidence: confirmed (with its
  line), or "saw no invalid access" on that variant, or not run (why).
- Without a GPU, the interpreter's bounds check (worker/probe/bounds.py) stood in: every out-of-bounds finding and the
  report say so ("interpreter bounds check, compute-sanitizer not run").
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .hypotheses import hypothesis
from .model import AuditReport, Finding

INTERPRETER = "interpreter bounds check, compute-sanitizer not run"  # = worker/probe/sanitizer.INTERPRETER (no torch here)
# Static suspects of accesses outside the tensors: the sanitizer also reruns the variants of the probes that would
# expose them (a tail the GPU ran without a visible error may still read past its tensor, inside the allocation).
MEMORY_SUSPECTS = ("unmasked_access", "block_ptr_boundary", "masked_load_other", "ignored_strides",
                   "assumed_contiguous")
WEAK = ("dtype", "magnitude")  # evidence.py makes these probes' failures P1 at most: not contract evidence of a P0
COVERED = ("compute-sanitizer over the probes' launches: memcheck (out-of-bounds and misaligned accesses) on the "
           "example call and the P0 candidates, racecheck (shared-memory hazards) on the example call")
Repro = Callable[[str, str], str]


def suspect_probes(report: AuditReport) -> list[str]:
    """The probes whose variants the sanitizer reruns because a static memory suspect names them."""
    out: list[str] = []
    for f in report.findings:
        h = hypothesis(f.id) if f.id in MEMORY_SUSPECTS else None
        out += [p for p in (h.probes if h else ()) if p not in out]
    return out


def contract(variant: str, robust: frozenset[str] = frozenset()) -> bool:
    """Is the variant ("PROBE: LABEL") an input the callers give? The example call is; a variant the probes set
    aside as robustness against the contract (evidence.py, tier_rules.py) is not; any other variant of a probe whose
    failures evidence.py counts as P0 evidence is."""
    probe = variant.split(":", 1)[0]
    return variant.startswith("example:") or (probe not in WEAK and variant not in robust)


def weigh_sanitizer(report: AuditReport, probed: dict[str, Any], repro: Repro | None = None,
                    robust: frozenset[str] = frozenset()) -> None:
    """Add the sanitizer's findings and verdicts to a report weighed from the probes (evidence.weigh calls it)."""
    san = probed.get("sanitizer") or {}
    if probed.get("device") != "cuda":
        _interpreter_label(report)
        return
    runs = san.get("runs") or []
    if not runs:
        report.not_checked.insert(0, f"compute-sanitizer not run ({san.get('not_run') or 'no record'}): on this GPU an "
                                     "out-of-bounds read that stays inside its allocation is not seen")
        return
    errors: dict[str, list[dict[str, Any]]] = {}
    ran: dict[str, set[str]] = {}
    for run in runs:
        tool = run.get("tool", "?")
        if run.get("not_run"):
            report.not_checked.append(f"compute-sanitizer {tool}: {run['not_run']}")
        ran[tool] = set(run.get("ran") or [])
        annotated: set[int] = set()
        for e in run.get("errors") or []:
            variant = e.get("variant") or "example: example"
            errors.setdefault(variant, []).append({**e, "tool": tool})
            failed = _failure_of(report, variant)
            if failed is None:
                _finding(report, tool, e, probed, repro, robust)
            elif not _claims_oob(failed) and id(failed) not in annotated:  # (an out-of-bounds claim gets a verdict)
                annotated.add(id(failed))
                failed.evidence = f"{failed.evidence} | behind it, {_said(tool, e)}"[:800]
    _verdicts(report, errors, ran.get("memcheck", set()))
    report.probes.append({"name": "sanitizer", "covered": COVERED,
                          "ran": sorted(set().union(*ran.values())) if ran else [],
                          "failures": [{"variant": v, "what": es[0]["what"]} for v, es in errors.items()],
                          "notes": [f"{r.get('tool')}: {r.get('summary') or r.get('not_run') or '?'} "
                                    f"({r.get('seconds', 0)} s)" for r in runs],
                          "not_run": "" if any(not r.get("not_run") for r in runs) else
                          "; ".join(str(r.get("not_run")) for r in runs)[:300]})


def _where(e: dict[str, Any], report: AuditReport, probed: dict[str, Any]) -> tuple[str, int]:
    """The sanitizer's file and line as the report names files: the audited file's own, a file beside it (an
    imported kernel's module, by its path relative to the audited file), else the entry's line of the audited file
    (a line of a file the report does not know is never put on the audited file)."""
    entry_line = int(probed.get("entry_line") or 0)
    f, line = e.get("file"), int(e.get("line") or 0)
    if not f or not line:
        return report.file, entry_line
    if Path(f).name == Path(report.file).name:
        return report.file, line
    target = probed.get("target")
    if target:
        try:
            rel = Path(f).resolve().relative_to(Path(target).resolve().parent)
            return str(Path(report.file).parent / rel), line
        except (ValueError, OSError):
            pass
    return report.file, entry_line


def _failure_of(report: AuditReport, variant: str) -> Finding | None:
    """The probe finding (or the static suspect it confirmed) whose failing variants include `variant`: the
    sanitizer's report on that variant is evidence for it, not a second finding."""
    probe = variant.split(": ", 1)[0]
    for f in report.findings:
        if f.probe != probe or f.severity == "info":
            continue
        if variant in {f"{probe}: {v}" for v in _listed(f)} or _variant_of(f) == variant:
            return f
    return None


def _listed(f: Finding) -> list[str]:
    """The variant labels a probe finding's evidence lists ("LABEL: what; LABEL: what (+n). detail")."""
    head = f.evidence.split(" | ")[0]
    return [part.partition(": ")[0].strip() for part in head.split("; ") if ": " in part]


def _said(tool: str, e: dict[str, Any]) -> str:
    at = f"{e.get('kernel') or 'kernel'}" + (f" ({Path(str(e['file'])).name}:{e['line']})" if e.get("file") else "")
    said = f"compute-sanitizer {tool}: {e['what']} at {at}" + (f", thread {e['thread']} block {e['block']}" if
                                                                 e.get("thread") else "")
    return said + (f"; {e['detail']}" if e.get("detail") else "") + (f" ({e['count']} reports)" if
                                                                     e.get("count", 1) > 1 else "")


def _finding(report: AuditReport, tool: str, e: dict[str, Any], probed: dict[str, Any], repro: Repro | None,
             robust: frozenset[str] = frozenset()) -> None:
    variant = e.get("variant") or "example: example"
    probe, _, label = variant.partition(": ")
    file, line = _where(e, report, probed)
    said = _said(tool, e)
    on_contract = contract(variant, robust)
    cmd = (repro(probe, label) if repro else "")
    cmd = f"PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool {tool} --error-exitcode 1 {cmd}" if cmd else ""
    report.findings.append(Finding(
        id=f"sanitizer_{tool}", category="memory_access", severity="P0" if on_contract else "P2", file=file, line=line,
        function=e.get("kernel"), evidence=f"{variant}: {said}"[:600],
        why=(f"compute-sanitizer {tool} reported an invalid access on {variant}, "
             + ("an input the callers give: on a GPU the kernel reads or writes memory that is not its tensors'"
                if on_contract else "an input outside what the callers give (robustness): verify whether callers "
                "can pass it") if tool == "memcheck" else
             f"compute-sanitizer racecheck reported a shared-memory hazard on {variant}: threads of one program "
             "read and write the same shared memory without a barrier between them"),
        fix=("mask every load and store with the tensor's bounds (offsets < size), and index with the tensor's own "
             "strides; then rerun the reproducer: it must exit 0" if tool == "memcheck" else
             "a Triton kernel has no shared memory of its own: report it with the reproducer (a compiler bug), or "
             "change the reduction / tl.dot layout that produces it"),
        reproducer=cmd, probe="sanitizer"))


def _variant_of(f: Finding) -> str:
    try:
        words = shlex.split(f.reproducer)
    except ValueError:
        return ""
    return words[words.index("--only") + 1] if "--only" in words[:-1] else ""


def oob_variants(f: Finding) -> list[str]:
    """The variants ("PROBE: LABEL") a finding claims read or wrote out of bounds: those its evidence lists as an
    illegal memory access (a probe finding lists up to 4 variants, the reproducer runs the first), else the
    reproducer's."""
    probe = f.probe or f.id.removeprefix("probe_")
    listed = re.findall(r"(?:^|; )([^;|]+?): illegal memory access", f.evidence.split(" | ")[0])
    if listed and probe:
        return [f"{probe}: {v.strip()}" for v in listed]
    v = _variant_of(f)
    return [v] if v else []


def _claims_oob(f: Finding) -> bool:
    text = f"{f.evidence} {f.why}".lower()
    return "illegal memory access" in text or "out-of-bounds" in text or "out of bounds" in text


def _verdicts(report: AuditReport, errors: dict[str, list[dict[str, Any]]], ran: set[str]) -> None:
    """The sanitizer's own verdict on every P0 that claims an out-of-bounds access (not its own findings)."""
    for f in report.findings:
        if f.severity != "P0" or f.probe == "sanitizer" or not _claims_oob(f):
            continue
        vs = oob_variants(f)
        seen = [(v, e) for v in vs for e in errors.get(v, []) if e["tool"] == "memcheck"]
        if seen:
            v, e = seen[0]
            verdict = (f"compute-sanitizer memcheck confirms: {e['what']} at {e.get('kernel') or 'kernel'}"
                       + (f" ({Path(str(e['file'])).name}:{e['line']})" if e.get("file") else "")
                       + (f" on {v}" if len(vs) > 1 else ""))
        elif vs and all(v in ran for v in vs):
            verdict = f"compute-sanitizer memcheck saw no invalid access on {'this variant' if len(vs) == 1 else 'these variants'}"
        else:
            verdict = "compute-sanitizer did not run this variant"
        f.evidence = f"{f.evidence} | {verdict}"[:800]


def _interpreter_label(report: AuditReport) -> None:
    """No GPU: the interpreter's bounds check stood in for compute-sanitizer; every finding that rests on it says so."""
    label = f"[{INTERPRETER}]"
    for f in report.findings:
        if f.probe and f.probe != "sanitizer" and _claims_oob(f) and label not in f.why:
            f.why = f"{f.why} {label}"
    if not any(c.startswith("memory safety:") for c in report.checked):
        report.checked.append(f"memory safety: {INTERPRETER} (no CUDA device here; on a GPU compute-sanitizer "
                              "memcheck and racecheck run over the example call and the P0 candidates)")
