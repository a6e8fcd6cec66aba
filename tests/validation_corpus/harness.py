"""Run the validation corpus through pytorch_to_triton.service.Service and score it against labels.json.

Used by tests/test_validation_corpus.py. Label semantics:

- {"expect": "pass"}: the candidate must come back ok with no finding of severity "fail".
- {"expect": "fail", "checks": [...]}: it must come back not ok, and every listed check id must be among
  its failing findings.
- {"expect": "fail", "checks_any": [...]}: as above, but one of the listed ids is enough (for bugs whose
  symptom depends on scheduling, e.g. a race shows as wrong values or as run-to-run differences).
- {"expect": "pass", "robustness": [...]}: a bug only inputs the problem never produces show (a layout-only
  stride bug): it must pass the contract, with each listed kind (layouts, empty, nan, extreme) named in its
  robustness section; "strict": "fail" records that strict=true fails it (issue 25).
- "gpu_only": true: the bug cannot show under Triton's CPU interpreter (say why in "reason"); it is
  skipped there and run on a GPU.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent
LABELS_FILE = CORPUS / "labels.json"


def load_labels() -> dict[str, dict[str, Any]]:
    """labels.json: "<task>/<kernel>.py" -> label."""
    return json.loads(LABELS_FILE.read_text())


def task_of(key: str) -> str:
    return key.split("/", 1)[0]


@dataclass
class Outcome:
    """One candidate's validation, scored against its label."""

    key: str
    label: dict[str, Any]
    ran: bool = True
    skip_reason: str = ""
    ok: bool | None = None
    fail_checks: list[str] = field(default_factory=list)
    warn_checks: list[str] = field(default_factory=list)
    summary: str = ""
    time_s: float | None = None
    interpreter: bool | None = None
    findings: list[dict[str, Any]] = field(default_factory=list)
    runtime: dict[str, Any] = field(default_factory=dict)
    robustness: list[str] = field(default_factory=list)

    @property
    def expect_fail(self) -> bool:
        return self.label["expect"] == "fail"

    @property
    def verdict(self) -> str:
        """'skipped', 'pass' (correct kernel passed), 'false_failure', 'caught', 'wrong_check', 'missed'."""
        if not self.ran:
            return "skipped"
        if not self.expect_fail:
            if not (self.ok and not self.fail_checks):
                return "false_failure"
            return "pass" if set(self.label.get("robustness") or []) <= set(self.robustness) else "robustness_missed"
        if self.ok:
            return "missed"
        need_all = self.label.get("checks") or []
        need_any = self.label.get("checks_any") or []
        got = set(self.fail_checks)
        if all(c in got for c in need_all) and (not need_any or got & set(need_any)):
            return "caught"
        return "wrong_check"

    @property
    def good(self) -> bool:
        return self.verdict in ("pass", "caught")

    def explain(self) -> str:
        want = self.label.get("checks") or self.label.get("checks_any") or []
        return (f"{self.key}: expected {self.label['expect']}{' ' + str(want) if want else ''}, got "
                f"ok={self.ok} fail_checks={self.fail_checks}\n{self.summary}")

    def as_dict(self) -> dict[str, Any]:
        return {"kernel": self.key, "expect": self.label["expect"], "bug": self.label.get("bug"),
                "what": self.label.get("what"), "expected_checks": self.label.get("checks"),
                "expected_checks_any": self.label.get("checks_any"), "gpu_only": bool(self.label.get("gpu_only")),
                "ran": self.ran, "skip_reason": self.skip_reason or None, "ok": self.ok,
                "fail_checks": self.fail_checks, "warn_checks": self.warn_checks, "verdict": self.verdict,
                "time_s": self.time_s, "interpreter": self.interpreter, "findings": self.findings,
                "robustness": self.robustness, "expected_robustness": self.label.get("robustness")}


def run_one(service: Any, key: str, label: dict[str, Any], *, has_cuda: bool, trials: int = 1,
            seed: int = 0, root: Path | None = None) -> Outcome:
    """Validate one corpus candidate with Service.validate (paths relative to the service's workspace)."""
    if label.get("gpu_only") and not has_cuda:
        return Outcome(key, label, ran=False, skip_reason=f"GPU only: {label.get('reason', '')}".rstrip(": "))
    root = root or CORPUS.parent.parent
    base = CORPUS.relative_to(root)
    ref = base / task_of(key) / "reference.py"
    rep = service.validate(reference=str(ref), candidates=[str(base / key)], trials=trials, seed=seed)
    cand = rep.candidates[0]
    return Outcome(
        key, label, ok=bool(rep.ok and cand.ok),
        fail_checks=sorted({f.check for f in cand.findings if f.severity == "fail"}),
        warn_checks=sorted({f.check for f in cand.findings if f.severity != "fail"}),
        summary=rep.summary, time_s=cand.time_s, interpreter=rep.interpreter,
        findings=[{"check": f.check, "severity": f.severity, "case": f.case, "count": f.count,
                   "message": f.message[:240]} for f in cand.findings],
        runtime=dict(rep.runtime or {}), robustness=sorted({r.kind for r in cand.robustness}),
    )


def score(outcomes: list[Outcome]) -> dict[str, Any]:
    """Catch rate over the buggy kernels that ran, false-failure rate over the correct ones."""
    ran = [o for o in outcomes if o.ran]
    bad = [o for o in ran if o.expect_fail]
    good = [o for o in ran if not o.expect_fail]
    caught = [o for o in bad if o.verdict == "caught"]
    false_fail = [o for o in good if o.verdict == "false_failure"]
    return {
        "buggy_total": len(bad), "caught": len(caught), "catch_rate": len(caught) / len(bad) if bad else 1.0,
        "failed_with_other_check": [o.key for o in bad if o.verdict == "wrong_check"],
        "missed": [o.key for o in bad if o.verdict == "missed"],
        "correct_total": len(good), "false_failures": [o.key for o in false_fail],
        "false_failure_rate": len(false_fail) / len(good) if good else 0.0,
        "skipped": [o.key for o in outcomes if not o.ran],
    }
