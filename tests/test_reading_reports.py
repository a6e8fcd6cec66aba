"""references/reading-reports.md lists exactly the fields the tools return: its field tables against the output
schemas (schemas.py), and against real run_validation and audit_kernel outputs made here on CPU."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytorch_to_triton import schemas

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "references" / "reading-reports.md"


def _documented() -> dict[str, set[str]]:
    """{model name: field names} from every `### `Model`` section's `| field | meaning |` table."""
    out: dict[str, set[str]] = {}
    model = None
    in_fields = False
    for line in DOC.read_text(encoding="utf-8").splitlines():
        head = re.match(r"^###\s+`(\w+)`\s*$", line)
        if head:
            model, in_fields = head.group(1), False
            out[model] = set()
            continue
        if line.startswith("#"):
            model = None
        if model is None or not line.startswith("|"):
            in_fields = in_fields and line.startswith("|")
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == "field":
            in_fields = True
            continue
        if in_fields and not set(cells[0]) <= {"-", " "}:
            out[model] |= set(re.findall(r"`(\w+)`", cells[0]))
    return out


DOCUMENTED = _documented()
MODELS = ["ValidationReport", "CandidateReport", "CaseResult", "Finding", "BenchmarkReport", "Timing", "AuditResult",
          "AuditFinding", "DocsReport", "SuiteReport", "SuiteRow"]


def test_the_doc_is_self_contained() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert "server/" not in text and "schemas.py" not in text, "the skill ships without the server's source"
    assert set(MODELS) <= set(DOCUMENTED), sorted(set(MODELS) - set(DOCUMENTED))


def test_run_benchmark_without_a_gpu_is_documented_as_the_estimate_it_answers() -> None:
    """Issue 49's friction: this doc said run_benchmark was "Refused without a GPU" while SKILL.md (and the code,
    roofline_estimate.no_gpu_benchmark) answer an ESTIMATE."""
    section = DOC.read_text(encoding="utf-8").split("## run_benchmark", 1)[1].split("\n## ", 1)[0]
    assert "Refused" not in section and "ESTIMATE only (no GPU)" in section
    from pytorch_to_triton.roofline_estimate import LABEL

    assert LABEL == "ESTIMATE"  # the verdict the doc quotes starts with the label the code writes
    assert "the gate is the ESTIMATE" in (ROOT / "SKILL.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", MODELS)
def test_documented_fields_are_the_schema_fields(name: str) -> None:
    fields = set(getattr(schemas, name).model_fields)
    doc = DOCUMENTED[name]
    assert not fields - doc, f"{name} fields missing from reading-reports.md: {sorted(fields - doc)}"
    assert not doc - fields, f"reading-reports.md documents {name} fields the output schema lacks: {sorted(doc - fields)}"


def test_findings_of_every_tool_name_their_check_in_check() -> None:
    assert "check" in schemas.Finding.model_fields and "check" in schemas.AuditFinding.model_fields
    old = schemas.AuditFinding.model_validate({"id": "unmasked_access", "category": "correctness", "severity": "P0",
                                               "file": "k.py", "line": 3})
    assert (old.check, old.id) == ("unmasked_access", "unmasked_access")  # the deprecated alias is kept


def _undocumented(name: str, record: dict) -> set[str]:
    return set(record) - DOCUMENTED[name]


def test_real_outputs_carry_only_documented_fields(service) -> None:
    """Every key of real results (a pass, a failing candidate, an audit) is documented under its part's name."""
    ok = service.validate(reference="tests/tasks/add_reference.py", candidates=["tests/tasks/add_stage1.py"],
                          trials=1).model_dump(mode="json")
    bad = service.validate(reference="tests/validation_corpus/elementwise/reference.py",
                           candidates=["tests/validation_corpus/elementwise/grid_too_small.py"], trials=1,
                           cases=[{"name": "tail", "shape": [300]}], replace_cases=True,
                           noncontiguous=False).model_dump(mode="json")
    assert ok["ok"] and not bad["ok"] and bad["candidates"][0]["findings"]
    missing: dict[str, set[str]] = {}
    for rep in (ok, bad):
        missing.setdefault("ValidationReport", set()).update(_undocumented("ValidationReport", rep))
        for cand in rep["candidates"]:
            missing.setdefault("CandidateReport", set()).update(_undocumented("CandidateReport", cand))
            for case in cand["cases"]:
                missing.setdefault("CaseResult", set()).update(_undocumented("CaseResult", case))
            for f in cand["findings"]:
                missing.setdefault("Finding", set()).update(_undocumented("Finding", f))
    audit = service.audit(path="tests/validation_corpus/elementwise/grid_too_small.py",
                          compile=False).model_dump(mode="json")
    assert audit["findings"], "the fixture has a known P0 (grid_floor_division)"
    missing["AuditResult"] = _undocumented("AuditResult", audit)
    missing["AuditFinding"] = set().union(*(_undocumented("AuditFinding", f) for f in audit["findings"]))
    missing = {k: v for k, v in missing.items() if v}
    assert not missing, f"fields in real outputs that reading-reports.md does not document: {missing}"
