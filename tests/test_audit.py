"""audit_kernel's static analysis on a labelled corpus of planted problems and on clean kernels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytorch_to_triton.audit import audit_source, render_markdown

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).parent / "audit_corpus"
CLEAN = sorted(ROOT.glob("examples/*/stage3.py")) + [ROOT / "tests/tasks/add_stage1.py",
                                                      ROOT / "benchmarks/tasks/softmax_row.py"]


def test_planted_problems_found_with_category_and_line() -> None:
    labels = json.loads((CORPUS / "labels.json").read_text())
    rep = audit_source((CORPUS / "planted.py").read_text(), "planted.py")
    found = {(f.id, f.category, f.line) for f in rep.findings}
    hits = [lab for lab in labels if any((lab["check"], lab["category"]) == (c, cat) and abs(line - lab["line"]) <= 1
                                         for c, cat, line in found)]
    missed = [lab for lab in labels if lab not in hits]
    assert len(hits) / len(labels) >= 0.9, f"missed {missed}"


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: str(p.relative_to(ROOT)))
def test_clean_kernels_have_no_p0(path: Path) -> None:
    rep = audit_source(path.read_text(), str(path))
    assert rep.counts["P0"] == 0, [(f.id, f.line, f.evidence) for f in rep.findings if f.severity == "P0"]


def test_report_markdown_and_syntax_error() -> None:
    rep = audit_source((CORPUS / "planted.py").read_text(), "planted.py")
    md = render_markdown(rep)
    assert md.startswith("# Audit: planted.py") and "| P0 |" in md and "Fix:" in md
    bad = audit_source("def f(:\n  pass\n", "bad.py")
    assert bad.findings[0].id == "syntax_error" and bad.findings[0].line == 1
