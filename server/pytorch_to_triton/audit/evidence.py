"""Severity follows evidence (issue 26): a P0 of wrong results needs a failing input and a command that shows it.

weigh() takes the static report (audit_source) and what the probes saw (worker/probe/probes.py, or why they did not run):
- a probe failure is a finding (P0; P1 for a bfloat16 drift or a non-finite output no reference judged) carrying the
  variant that failed and a one-line reproducer; a static suspect on the failing kernel line carries it instead;
- a static suspect of wrong results (audit/hypotheses.py) that no failure confirms is at most P2, its `why` starting
  with "verify:", naming the inputs that would expose it and what the probes covered; its fix is not offered (a fix
  such as `other=` on lanes that feed a tl.dot changes results, and nothing showed it is needed);
- a suspect whose probe failed on another line is P2 "verify: may cause ..." (unconfirmed: the failure is already a
  finding of its own on its line);
- a failure on an input outside the contract (audit/contract.py: the tiers of tier_rules.py, shared with
  run_validation) is a robustness finding, reported apart with its input and fix, never a P0/P1; where the contract
  says the callers give such inputs it is a P0; every finding says the contract it assumed (`assumed`);
- findings the task sidecar disputes (`[audit] accept = [{check, line, reason}]`) move to `accepted` with the reason;
- with a task reference, run_validation's verdict comes first (audit/validation_evidence.py, issue 45): its contract
  failures are the P0s, no static finding is a P0 by itself, and every probe failure is robustness
  (tier_rules.probe_kind), except an out-of-bounds access on the example call itself, a P1 "verify:" (the validator
  passed its contract cases: the stray access did not reach the outputs).
Findings about cost (P1 performance) and honesty checks keep their static severity, except a per-call constexpr
(`constexpr_recompile`): the probes record the values each constexpr took across their sizes, so one that stayed
the same while the sizes changed (a fixed table size, a model dimension) is P2 "verify:", and one that changed is
confirmed with the values seen (one compile each).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import tier_rules as tr
from . import target_findings
from .contract import Contract
from .hypotheses import hypothesis
from .model import AuditReport, Finding, Robustness
from .sanitizer_evidence import weigh_sanitizer
from .validation_evidence import Validated, merge_static
from .validation_evidence import add as add_validated

CATEGORY = {"example": "correctness", "repeat": "correctness", "layout": "memory_access", "rows": "correctness",
            "sizes": "correctness", "sentinel": "memory_access", "magnitude": "numerical_stability",
            "dtype": "numerical_stability", "defaults": "correctness", "reference": "correctness",
            "grad": "correctness"}
FIX = {
    "example": "make the example call work first: the error names the kernel line",
    "repeat": "find the race: programs writing the same address, or a load of memory no program wrote",
    "layout": "pass every stride to the kernel and index with it, or call .contiguous() on the inputs in the wrapper",
    "rows": "launch enough programs for every row (triton.cdiv) and mask the rows of the last block",
    "sizes": "mask the tail (offsets < size) and guard the empty case in the wrapper (return early when numel is 0)",
    "sentinel": "mask the load with the sentinel test (target != ignore_index) before indexing with the value",
    "magnitude": "subtract the row max before exp (and add it back after log); accumulate in float32",
    "dtype": "load, accumulate and reduce in float32; cast only the stored result",
    "defaults": "give each documented default a value before it is used (a None default is replaced, not used)",
    "reference": "compare the failing variant against the reference line by line (run_validation shows where)",
    "grad": "check the backward's formula input by input against the reference's autograd (torch.autograd.gradcheck "
            "on a small float64 case), then every shape it reshapes the gradient to",
}
Repro = Callable[[str, str], str]


def _status(p: dict[str, Any]) -> str:
    if p.get("not_run"):
        return f"{p['name']} did not run ({p['not_run']})"
    n, bad, aside = len(p.get("ran", [])), len(p.get("failures", [])), len(p.get("aside") or [])
    return f"{p['name']} ran {n} variant{'s' * (n != 1)}" + (f", {bad} failed" if bad else f", {aside} failed on "
                                                           "robustness inputs only" if aside else " and passed")


def _same_file(rec: dict[str, Any], report_file: str) -> bool:
    f = rec.get("file")
    return f is None or Path(str(f)).name == Path(report_file).name


def _weak(probe: str, rec: dict[str, Any]) -> bool:
    """Evidence that shows a drift, not a wrong result: a bfloat16 difference, or non-finite values no reference
    judged (the function may overflow on its own)."""
    return probe == "dtype" or (probe == "magnitude" and rec.get("judged_by") != "reference") or \
        bool(rec.get("interpreter_fp8"))


def _failure_finding(probe: str, recs: list[dict[str, Any]], report_file: str, repro: Repro | None,
                     entry_line: int = 0, kernels: set[str] | None = None) -> Finding:
    first = recs[0]
    weak = _weak(probe, first)
    # the kernel line of an error inside the audited file, else the entry's def line (a wrong result has no line);
    # a line with no file (an error raised in torch's own code) is not a line of this file
    line = 0
    if first.get("file") is not None and _same_file(first, report_file):
        line = int(first.get("kernel_line") or first.get("line") or 0)
    elif first.get("file") is None and first.get("kernel_line") is not None and \
            (kernels is None or first.get("kernel_function") in kernels):  # a kernel of another file: its own line
        line = int(first["kernel_line"])
    line = line or entry_line
    variants = "; ".join(f"{r['variant']}: {r['what']}" for r in recs[:4]) + (f" (+{len(recs) - 4})" if len(recs) > 4
                                                                            else "")
    detail = first.get("detail") or first.get("error") or ""
    return Finding(id=f"probe_{probe}", category=CATEGORY.get(probe, "correctness"),  # type: ignore[arg-type]
                   severity="P2" if first.get("interpreter_fp8") else "P1" if weak else "P0", file=report_file,
                   line=line,
                   function=first.get("kernel_function"), evidence=f"{variants}. {detail}"[:600],
                   why=("verify: " if first.get("interpreter_fp8") else "") +
                       (f"probe {probe} failed on {first['variant']}: {first['what']}" +
                        (" (no reference judged it: verify it is not the function's own overflow)" if weak and
                         probe == "magnitude" else "") +
                        (" (float8 output under the interpreter, whose float32 -> float8 casts round differently "
                         "from the GPU's: verify on a GPU)" if first.get("interpreter_fp8") else "")),
                   fix=FIX.get(probe, ""), reproducer=repro(probe, first["variant"]) if repro else "", probe=probe)


def weigh(report: AuditReport, probed: dict[str, Any] | None, why_not: str = "", repro: Repro | None = None,
          accept: list[dict[str, Any]] | None = None, contract: Contract | None = None,
          validated: Validated | None = None) -> AuditReport:
    """Set every finding's severity from the evidence: run_validation's verdict when the task's validation ran
    (`validated`), then the probes', tiered against the contract (P0/P1 from contract inputs only; failures outside it
    go to report.robustness); apply the sidecar's accepted disputes."""
    contract = contract or Contract()
    probes = list((probed or {}).get("probes", []))
    report.probes = probes
    if validated is not None:
        report.not_checked = [n for n in report.not_checked if not n.startswith("runtime values")]  # it ran them
        add_validated(report, validated)
        merge_static(report, validated)
        _probes_as_robustness(probes, validated)
    if probed is None and validated is None:
        report.not_checked.insert(0, f"probes did not run: {why_not or 'no example call'}; static suspects of wrong "
                                     "results are hypotheses (P2 'verify:') until a failing input shows them")
    elif probed is None:
        report.not_checked.insert(0, f"probes did not run: {why_not or 'no example call'}")
    failed = {p["name"]: list(p.get("failures", [])) for p in probes if p.get("failures")}
    reached = _reach(report, probed)
    by_name = {p["name"]: p for p in probes}
    used: set[int] = set()
    for f in report.findings:
        h = hypothesis(f.id)
        if h is None or f.severity not in ("P0", "P1"):
            continue
        hits = [r for name in h.probes for r in failed.get(name, [])]
        here = next((r for r in hits if _same_file(r, f.file) and r.get("kernel_line") is not None
                     and abs(int(r["kernel_line"]) - f.line) <= 1), None)
        if here is not None:
            used.add(id(here))
            name = next(n for n in h.probes if here in failed.get(n, []))
            f.severity, f.probe = "P0", name
            f.evidence = f"{f.evidence} | confirmed by probe {name}: {here['variant']}: {here['what']}"[:600]
            f.reproducer = repro(name, here["variant"]) if repro else ""
            f.fix = f"{f.fix} Then rerun the reproducer: it must pass."
            continue
        status = "; ".join(_status(by_name[n]) for n in h.probes if n in by_name) or "no probe ran"
        if validated is not None:
            first = next(iter(validated.failures()), None)
            status = (f"run_validation failed {first['check']} on case {first.get('case')} (its P0; this may be the "
                      f"cause); {status}" if first else f"run_validation: {validated.verdict}; {status}")
        if probed is not None and not reached(f):
            hits, status = [], (f"the probes' entry {probed.get('entry')} never ran this code (it launched "
                                f"{', '.join(probed.get('launched') or []) or 'no kernel'}): give a harness for it")
        if hits:  # still unconfirmed (the failure is on another line, already its own finding): at most P2
            f.severity = "P2"
            f.why = (f"verify: may cause the failing probe {hits[0].get('variant')} ({hits[0].get('what')}), which "
                     f"failed elsewhere ({status}). {f.why}")
        else:
            f.severity = "P2"
            f.why = f"verify: {h.inputs} would expose this; {status}. {f.why}"
        f.fix = ("none offered until a failing input shows the problem: run the probes (audit_kernel with harness=, "
                 f"references/audit-guide.md 'Probes'); the check's usual fix would be: {f.fix}")
        f.snippet = ""
    for name, recs in failed.items():
        rest = [r for r in recs if id(r) not in used]
        # one finding per probe (its variants are one problem seen several ways), split only by the evidence's weight
        for weak in (False, True):
            recs_w = [r for r in rest if _weak(name, r) == weak]
            if recs_w:
                report.findings.append(_failure_finding(name, recs_w, report.file, repro,
                                                        int((probed or {}).get("entry_line") or 0),
                                                        {k["name"] for k in report.kernels} or None))
    if probed is not None:
        # the probes' robustness first: only run_validation's entries are there to merge with (issue 45)
        _robustness(report, probes, repro, contract, int(probed.get("entry_line") or 0))
        target_findings.add(report, probed, contract.require)
        _weigh_recompiles(report, probed)
        _weigh_unrun_syncs(report, probed)
        robust = frozenset(r["variant"] for p in probes for r in p.get("aside") or []
                           if tr.tier_of(r.get("kind") or "structure", contract.require) != tr.CONTRACT)
        weigh_sanitizer(report, probed, repro, robust)  # compute-sanitizer's findings and verdicts (GPU), or its stand-in
    if validated is not None:  # a probe's contract-size evidence the validator's verdict did not share: verify
        for f in report.findings:
            if f.severity == "P0" and f.probe != "run_validation":
                f.severity = "P1"
                f.why = (f"verify: run_validation passed its contract cases ({validated.verdict}), yet {f.why}; an "
                         "access outside the tensors that did not reach the outputs")[:600]
    for f in report.findings:
        if f.severity != "info" and f.probe != "run_validation":  # the validator's say what they assumed
            f.assumed = contract.line(f.probe)
    report.contract = contract.summary()
    _accept(report, accept or [])
    report.finalize()
    if report.robustness:
        report.verdict += "; not robust to: " + ", ".join(dict.fromkeys(r.title for r in report.robustness))
    suspects = sum(f.severity == "P2" and f.why.startswith("verify:") and hypothesis(f.id) is not None
                   for f in report.findings)
    if suspects and not report.counts["P0"]:
        ran = "run_validation's cases did not show them" if validated is not None else \
            "the probes did not show them" if probed is not None else "give an example call (harness=) to run them"
        report.verdict += f"; {suspects} static suspect(s) of wrong results to verify (P2): {ran}"
    if any(c.startswith("compiled for ") for c in report.checked):  # the target compile ran (this CPU, for the GPU)
        target_findings.stale_compiled_notes(report)
    if validated is not None:
        report.verdict += f"; run_validation: {validated.verdict.split(';')[0]}"
    if probed is None:  # issue 45 item 4: what was not run is said on the verdict line, never a bare "no problems"
        why = (why_not or "no example call").split(":")[0]
        report.verdict += f"; probes skipped ({why})" if validated is not None else \
            f"; static only: probes and compile skipped ({why})"
    return report


def _probes_as_robustness(probes: list[dict[str, Any]], v: Validated) -> None:
    """With run_validation's verdict (issue 45), every input the probes invent is robustness (tier_rules.probe_kind):
    each probe failure moves to the probe's `aside` with its kind. The example, repeat and reference probes repeat the
    validator's contract cases: their failures are the validator's already (dropped, noted), except an out-of-bounds
    access of the example call the validator passed, which stays a failure (capped at P1 in weigh)."""
    for p in probes:
        kind = tr.probe_kind(p["name"])
        for r in list(p.get("failures") or []):
            if kind is not None:
                p["failures"].remove(r)
                p.setdefault("aside", []).append({**r, "kind": kind, "detail": r.get("detail") or r.get("error")
                                                  or r["what"]})
            elif not v.ok or not r.get("oob"):
                p["failures"].remove(r)
                p.setdefault("notes", []).append(f"{r['variant']}: {r['what']}: a contract case run_validation "
                                                 f"judged ({v.verdict}); its verdict stands")


# The check name of a robustness kind per probe, as audit-guide.md documents it (kept from issue 26's P2 notes).
SUFFIX = {"structure": "parity", "precision": "tf32", "layouts": "noncontiguous"}
WHYS = {
    "structure": "fails only at a size that breaks the example's structure: an odd size of a dimension the example "
                 "has even (the even size next to it passing), or a size the kernel is not built for (a tl.arange over "
                 "a head dim of 17 does not compile): if the entry requires such sizes (halves, powers of two), say so "
                 "with an assert at its top; if they are valid input, mask the tail",
    "layouts": "fails only when an input the example passes contiguous is a non-contiguous view (transposed, strided); "
               "run_validation counts non-contiguous inputs as robustness too (cases.py kind \"layouts\"): make it "
               "contract with [audit] require = [\"layouts\"] if callers pass views",
    "rows": "fails on a prefix of the batch, an input the task's cases never give (run_validation judged the contract)",
    "sizes": "fails at a size the task's cases never give (run_validation judged the contract at the task's sizes)",
    "sentinel": "fails on sentinel values the task's cases never put in the integer inputs",
    "dtype": "drifts in bfloat16, a dtype the task's cases do not run",
    "grad": "the backward differs from the reference's autograd; the task's validation does not compare gradients "
            "(validate with gradients=true if callers train through it)",
    "1d": "fails only when a 1-D tensor (a weight or bias) is a strided view; callers of such entries pass "
          "parameters, which are dense",
    "weight": "fails only when a tensor that does not carry the batch (a weight, a packed buffer, a table, an output "
              "buffer) is a non-contiguous view, while the inputs that carry the batch pass; its callers usually pass "
              "it dense (a Parameter, a fresh allocation)",
    "precision": "the fp32 result differs from the reference at TF32 precision, and agrees once the kernel's fp32 "
                 "tl.dot runs in IEEE (TRITON_F32_DEFAULT=ieee): TF32 is Triton's default for fp32 dots; it matters "
                 "only where callers need fp32 accuracy (it replaces an IEEE matmul): about half the dot throughput on "
                 "an H200 for IEEE; for bf16/fp16 inputs it changes nothing",
    "lastdim": "right for any row stride, wrong when the last dimension itself is strided (a transposed view): the "
               "kernel assumes a unit last-dim stride, Triton's usual contract",
    "empty": "fails only on an empty batch (a dimension of 0), which the contract does not give",
    "extreme": "fails only on values far from the example's (x100, or shifted by -120), which run_validation also "
               "counts as robustness (cases.py kind \"extreme\"): a quantizer or a kernel without max subtraction "
               "may overflow there; make it contract with [audit] require = [\"extreme\"] if callers give such values",
    "defaults": "fails only when the entry is called without its optional arguments, which no call in the file does: "
                "if callers may leave them out, fix the default path; else make them required",
}


def _robustness(report: AuditReport, probes: list[dict[str, Any]], repro: Repro | None, contract: Contract,
                entry_line: int = 0) -> None:
    """Each probe's failures on inputs outside the default contract (worker/probe/probes.py, Probe.aside), tiered against
    the contract (tier_rules.py): robustness findings reported apart, one per probe and kind; a P0 where the contract
    says the callers give such inputs (`[audit] require`, an early return on empty input...)."""
    for p in probes:
        by_kind: dict[str, list[dict[str, Any]]] = {}
        for r in p.get("aside") or []:
            by_kind.setdefault(r.get("kind") or "structure", []).append(r)
        for kind, recs in by_kind.items():
            first = recs[0]
            seen = "; ".join(f"{r['variant']} ({r['what'][:60]})" for r in recs[:3])
            check = f"probe_{p['name']}_{SUFFIX.get(kind, kind)}"
            cmd = repro(p["name"], first["variant"]) if repro else ""
            same = next((r for r in report.robustness if not r.check.startswith("probe_") and
                         tr.PARENT.get(r.kind, r.kind) == tr.PARENT.get(kind, kind)), None)
            if same is not None and tr.tier_of(kind, contract.require) != tr.CONTRACT:
                # run_validation named this kind already: one entry, in its words (issue 45, "Agreement")
                same.evidence = f"{same.evidence} | the audit's {check} failed too: {seen}"[:600]
                continue
            if tr.tier_of(kind, contract.require) == tr.CONTRACT:
                report.findings.append(Finding(
                    id=f"probe_{p['name']}", category=CATEGORY.get(p["name"], "correctness"),  # type: ignore[arg-type]
                    severity="P1" if _weak(p["name"], first) else "P0", file=report.file, line=entry_line, evidence=f"{seen}; {first.get('detail', '')}"[:600],
                    why=f"probe {p['name']} failed on {first['variant']}: {first['what']}; the contract says callers "
                        f"give {tr.title(kind)}", fix=tr.fix(kind) or FIX.get(p["name"], ""), reproducer=cmd,
                    probe=p["name"]))
                continue
            report.robustness.append(Robustness(
                kind=kind, title=tr.title(kind), check=check, message=f"{first['variant']}: {first['what']}. "
                f"{WHYS.get(kind, '')}"[:600], case=first["variant"], evidence=f"{seen}; {first.get('detail', '')}"[:600],
                fix=tr.fix(kind) or FIX.get(p["name"], ""), reproducer=cmd, assumed=contract.line(kind=kind)))


SYNC_CHECKS = ("host_sync", "device_assert_sync")


def _weigh_unrun_syncs(report: AuditReport, probed: dict[str, Any]) -> None:
    """A static host sync on a line the example call did not run (worker/probe/probe_lines.py), while it passed, is not
    shown to be on the entry's path: P2 "verify:" (unsloth-zoo's one-time self-checks behind a module-level
    cache, a cuBLAS backend this machine does not pick: issue 26, held_out_18)."""
    lines = set(probed.get("lines_run") or [])
    example = next((p for p in probed.get("probes", []) if p.get("name") == "example"), None)
    if not lines or example is None or example.get("failures") or example.get("not_run"):
        return
    for f in report.findings:
        if f.id not in SYNC_CHECKS or f.severity != "P1" or not f.line:
            continue
        if any(n in lines for n in range(f.line - 2, f.line + 1)):
            f.evidence = f"{f.evidence} | run by the example call of {probed.get('entry')}"[:600]
            continue
        f.severity = "P2"
        f.why = (f"verify: the example call of {probed.get('entry')} did not run this line (its path does not reach "
                 f"it: a branch, a one-time check, another backend); a cost only for calls that take it. {f.why}")


def _weigh_recompiles(report: AuditReport, probed: dict[str, Any]) -> None:
    """constexpr_recompile against the values the probes saw the parameter take while they changed the sizes."""
    seen = probed.get("constexpr_values") or {}
    batch = probed.get("constexpr_values_batch")  # up to the rows probe: only the batch changed
    varied = [p["name"] for p in probed.get("probes", []) if p.get("name") in ("rows", "sizes") and p.get("ran")]
    new_keys = probed.get("batch_new_keys")  # kernel -> specialisations the rows probe's batch sizes added
    for f in report.findings:
        if f.id != "constexpr_recompile" or f.severity != "P1":
            continue
        m = re.search(r"tl\.constexpr of (\w+)", f.why)
        param = f.evidence.split("=", 1)[0].strip()
        if new_keys is not None and m and not _compiles_per_batch(f, param, m.group(1), new_keys):
            continue
        values = (seen.get(m.group(1)) or {}).get(param) if m else None
        if not values:
            continue  # the kernel never launched with it under the probes: the static finding stands
        per_batch = ((batch or {}).get(m.group(1)) or {}).get(param) if m else None
        if len(values) > 1 and batch is not None and not (per_batch and len(per_batch) > 1):
            # it moved only when the sizes probe moved another dimension (a weight's): once per model, not per call
            f.severity = "P2"
            f.why = (f"verify: {param} took {', '.join(values)} as the probes changed the sizes, but not with the "
                     "batch: it compiles once per value of that size, a cost per call only if that size changes "
                     f"between your calls (a sequence length does, a weight dimension does not). {f.why}")
        elif len(values) > 1:
            f.evidence = f"{f.evidence} | confirmed by the probes: {param} took {', '.join(values)} (one compile each)"
        elif varied:
            f.severity = "P2"
            f.why = (f"verify: {param} stayed {values[0]} while the probes changed the sizes ({', '.join(varied)}): "
                     f"it recompiles only if it changes between your calls. {f.why}")


def _compiles_per_batch(f: Finding, param: str, kernel: str, new_keys: dict[str, int]) -> bool:
    """Issue 35 item 4: the compile-count probe. P1 stays only if the rows probe's other batch sizes gave the kernel a
    new specialisation key (launch_specs.py: the key Triton compiles on), i.e. a second compile; else P2 "verify:".
    True: the finding is left to the constexpr-value rules below."""
    if kernel not in new_keys:
        f.severity = "P2"
        f.why = (f"verify: the probes' batch change did not launch {kernel}, so no second compile was seen; it "
                 f"recompiles per call only if {param} changes between your calls. {f.why}")
        return False
    if new_keys[kernel] == 0:
        f.severity = "P2"
        f.why = (f"verify: the rows probe ran other batch sizes and {kernel} kept the example's specialisation key "
                 f"(the key Triton compiles on): no second compile. {f.why}")
        return False
    f.evidence = (f"{f.evidence} | compile count: other batch sizes gave {kernel} {new_keys[kernel]} new "
                  "specialisation(s), one compile each")[:600]
    return True


def _reach(report: AuditReport, probed: dict[str, Any] | None) -> Callable[[Finding], bool]:
    """Did the probed entry run the code of a finding? Its kernel was launched, or its wrapper is the entry (and the
    launch it names, if any, is one that ran); a @jit helper counts as run when any kernel ran."""
    launched = set((probed or {}).get("launched") or [])
    entry = (probed or {}).get("entry")
    kernels = {k["name"]: k.get("helper", False) for k in report.kernels}

    def ran(f: Finding) -> bool:
        if not launched:  # nothing launched (the example failed first, or no probe ran): cannot tell
            return True
        if f.function in kernels:
            return f.function in launched or (kernels[f.function] and bool(launched))
        named = [k for k in kernels if k in f.evidence]
        return (f.function == entry or f.function is None) and (not named or any(k in launched for k in named))

    return ran


def _accept(report: AuditReport, accept: list[dict[str, Any]]) -> None:
    for a in accept:
        hit = next((f for f in report.findings if f.id == a["check"] and abs(f.line - int(a["line"])) <= 1), None)
        if hit is None:
            report.not_checked.append(f"[audit] accept {a['check']} line {a['line']} matches no finding now "
                                      "(the code moved, or the finding is gone): update or remove it")
            continue
        report.findings.remove(hit)
        hit.accepted = str(a["reason"])
        report.accepted.append(hit)
