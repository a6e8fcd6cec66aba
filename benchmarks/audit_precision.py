"""Precision and recall of audit_kernel's static analysis on public Triton code (issue 17). CPU only, ~3 s.

    PYTHONPATH=$PWD/server python3 benchmarks/audit_precision.py [--json out.json]

Audits every file of tests/audit_public_corpus/ and grades its P0/P1 findings with labels.json (every finding before
issue 17 classified by reading the code, and the real problems it missed): P0 and P1 precision before and now, recall
of the known real problems, the same per check, and the held-out projects apart. tests/test_audit_public.py imports
score().
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "audit_public_corpus"
sys.path.insert(0, str(ROOT / "server"))

from pytorch_to_triton.audit import audit_source  # noqa: E402

SEVERE = ("P0", "P1")
# Issue 26: the projects of the held-out sets (tests/audit_public_corpus/probe_labels.json: added after the checks
# were written, never tuned on): their static figures are reported apart.
HELD_OUT = tuple(sorted({f.split("/")[2] for f, m in json.loads((CORPUS / "probe_labels.json").read_text())["files"]
                         .items() if m["set"] != "tuned"}))
# Fresh projects prepared without running the audit on them: the static pass leaves a project's folder out while it is
# listed here, until its findings are labelled in labels.json (then drop it from here). Issue 45's two fresh pairs
# (held_out_35..38), prepared at c014ae9; its fresh batch held_out_39, prepared at c5a0105:
PENDING: tuple[str, ...] = ("rotalabs_accel", "moe_ops", "flashlib", "torch_fps", "fasterkernels", "fused_turboquant",
                            "crossentropy_triton", "triton_csprng", "flash_sinkhorn", "eigentune")


def held_out(rel: str) -> bool:
    """A file of a project the static checks were not tuned on."""
    return rel.split("/")[0] in HELD_OUT


def labels() -> dict[str, Any]:
    """The corpus labels (findings before issue 17 and missed problems)."""
    return json.loads((CORPUS / "labels.json").read_text())


def _match(items: list[dict], file: str, check: str, line: int) -> dict | None:
    return next((x for x in items if x["file"] == file and x["check"] == check and abs(x["line"] - line) <= 1), None)


def score() -> dict[str, Any]:
    """Audit the corpus; classify every P0/P1 finding with the labels; measure recall of the real problems."""
    lab = labels()
    files = [p for p in sorted(CORPUS.glob("*/*.py")) if p.parent.name not in PENDING]
    now: list[dict] = []
    for path in files:
        rel = str(path.relative_to(CORPUS))
        rep = audit_source(path.read_text(), rel)
        for f in rep.findings:
            now.append({"file": rel, "check": f.id, "line": f.line, "severity": f.severity, "why": f.why})
    real = [x for x in lab["findings"] if x["label"] == "real"]
    false = [x for x in lab["findings"] if x["label"] == "false"]
    # Problems the new checks find that the old auditor missed are real by the same reading.
    known_real = real + [dict(x, severity=None) for x in lab["missed"]]
    graded = []
    for f in now:
        if f["severity"] not in SEVERE:
            continue
        hit = _match(known_real, f["file"], f["check"], f["line"])
        label = "real" if hit else ("false" if _match(false, f["file"], f["check"], f["line"]) else "unlabelled")
        graded.append({**f, "label": label, "set": "held_out" if held_out(f["file"]) else "tuned"})
    recall = []
    for x in known_real:
        found = [f for f in now if f["file"] == x["file"] and f["check"] == x["check"] and abs(f["line"] - x["line"]) <= 1]
        need = ("P0",) if x.get("severity") == "P0" else SEVERE  # a real P0 must stay a P0
        recall.append({**x, "found": any(f["severity"] in need for f in found)})
    return {"files": len(files), "graded": graded, "recall": recall, "before": lab["findings"]}


def _precision(items: list[dict], sev: str) -> tuple[int, int]:
    sel = [x for x in items if x["severity"] == sev]
    return sum(x["label"] == "real" for x in sel), len(sel)


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.0f}% ({a}/{b})" if b else "- (0/0)"


def table(s: dict[str, Any]) -> str:
    """The precision/recall table as markdown."""
    before, recall = [x for x in s["before"] if not held_out(x["file"])], s["recall"]
    graded = [g for g in s["graded"] if g["set"] == "tuned"]
    out = [g for g in s["graded"] if g["set"] == "held_out"]
    rows = [f"Public corpus: {s['files']} files; {len(before)} P0/P1 findings before issue 17 labelled by reading "
            "the code.", "",
            "| | before | now |", "|---|---|---|"]
    for sev in SEVERE:
        rows.append(f"| {sev} precision | {_pct(*_precision(before, sev))} | {_pct(*_precision(graded, sev))} |")
    old_found = sum(1 for x in recall if x.get("severity"))
    rows.append(f"| recall of known real problems | {_pct(old_found, len(recall))} | "
                f"{_pct(sum(x['found'] for x in recall), len(recall))} |")
    unl = [g for g in graded if g["label"] == "unlabelled"]
    if unl:
        rows.append(f"| unlabelled P0/P1 now | | {len(unl)} |")
    rows += ["", "| check | P0 before | P0 now | P1 before | P1 now | real found now |", "|---|---|---|---|---|---|"]
    checks = sorted({x["check"] for x in before} | {g["check"] for g in graded} | {x["check"] for x in recall})
    by = defaultdict(list)
    for x in recall:
        by[x["check"]].append(x["found"])
    for c in checks:
        cells = []
        for sev in SEVERE:
            for items in (before, graded):
                a, b = _precision([x for x in items if x["check"] == c], sev)
                cells.append(f"{a}/{b}" if b else "-")
        found = by.get(c, [])
        rows.append(f"| {c} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} | "
                    f"{sum(found)}/{len(found) if found else 0} |")
    if out:
        rows += ["", f"Held out ({', '.join(HELD_OUT)}: files the checks were not tuned on), static suspects only: "
                 f"P0 {_pct(*_precision(out, 'P0'))}, P1 {_pct(*_precision(out, 'P1'))}. The audit reports these at "
                 "P2 'verify:' until a probe confirms one (benchmarks/audit_probe_precision.py)."]
    rows += ["", "Cells are real/total. Recall counts a labelled-real P0 only if it is still a P0; a real problem "
             "reported at P2 `verify:` does not count."]
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the graded findings here")
    args = ap.parse_args()
    s = score()
    if args.json:
        Path(args.json).write_text(json.dumps(s, indent=1))
    for g in s["graded"]:
        if g["label"] != "real":
            print(f"{g['label']}: {g['file']}:{g['line']} {g['severity']} {g['check']}")
    for x in s["recall"]:
        if not x["found"]:
            print(f"not found: {x['file']}:{x['line']} {x['check']} ({x['reason'][:80]})")
    print(table(s))


if __name__ == "__main__":
    main()
