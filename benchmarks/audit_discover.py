"""Issue 45, part 3: the public corpus audited WITHOUT harness= (the example call searched for in the file's own
callers and its package's: audit/discover.py), on the files that have a known real problem and today need a harness.

For each file of tests/audit_public_corpus/probe_labels.json's "problems" (every one has a harness in "files"), the
full audit runs with no harness (static pass, then the probes when a caller gave an example call, in the worker: the
CPU interpreter here). It reports, per file, the example call used (or why none) and the findings; in total, how many
files got an example call from their own code, and how many known problems a finding names (its check, at any
severity, or a robustness entry), against the same audit with the search turned off (`--no-search`: the audit as it
was before issue 45, whose static suspects stay P2 without an example call). This set measures; no rule is tuned on
it.

Run from the repo root: PYTHONPATH=$PWD/server python3 benchmarks/audit_discover.py [--json out.json] [--no-search]
[--only SUBSTRING] [--timeout 120] [--with-callers]. CPU (2 shared cores): most files have no caller in the corpus (each is a single
file copied from its package) and take ~1 s; the few with one run the probes (up to --timeout each).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LABELS = ROOT / "tests" / "audit_public_corpus" / "probe_labels.json"
sys.path.insert(0, str(ROOT / "server"))


def _problems() -> dict[str, list[dict[str, Any]]]:
    labels = json.loads(LABELS.read_text())
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in labels["problems"]:
        if labels["files"].get(p["file"], {}).get("harness"):
            out[p["file"]].append(p)
    return dict(out)


def _has_caller(path: str) -> bool:
    from pytorch_to_triton.audit import discover

    return bool(discover.find((ROOT / path).resolve(), ROOT).usable())


def audit_one(svc: Any, path: str, problems: list[dict[str, Any]], timeout_s: float) -> dict[str, Any]:
    """One file's audit without a harness: the example call, the findings, the known problems named."""
    t0 = time.monotonic()
    rep = svc.audit(path=path, compile=False, timeout_s=timeout_s)
    example = next((c.removeprefix("example call: ") for c in rep.checked if c.startswith("example call: ")), "")
    why = next((n.removeprefix("probes did not run: ") for n in rep.not_checked if n.startswith("probes did not run")),
               "")
    named = {f.id for f in rep.findings} | {r.check for r in rep.robustness}
    return {"file": path, "seconds": round(time.monotonic() - t0, 1), "example": example, "no_example": why[:400],
            "counts": {k: rep.counts.get(k, 0) for k in ("P0", "P1", "P2")},
            "findings": [f"{f.severity} {f.id}:{f.line}" for f in rep.findings if f.severity in ("P0", "P1")],
            "problems": [{"check": p["check"], "named": p["check"] in named,
                          "severity": next((f.severity for f in rep.findings if f.id == p["check"]),
                                           "robustness" if p["check"] in {r.check for r in rep.robustness} else "")}
                         for p in problems]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json")
    ap.add_argument("--no-search", action="store_true", help="the audit as before issue 45 (no caller search)")
    ap.add_argument("--only", help="files whose path contains this")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--with-callers", action="store_true", help="audit only the files whose search finds a caller "
                    "to run (the others are static-only, as on any device): the GPU part")
    a = ap.parse_args()
    if a.no_search:
        from pytorch_to_triton.audit import discover

        discover.find = lambda target, root, read=None: discover.Found(searched=["nothing (--no-search)"])
    from pytorch_to_triton.service import Service

    probs = _problems()
    rows = []
    svc = Service(ROOT)
    try:
        for path in sorted(probs):
            if a.only and a.only not in path:
                continue
            if a.with_callers and not _has_caller(path):
                continue
            try:
                row = audit_one(svc, path, probs[path], a.timeout)
            except Exception as e:  # noqa: BLE001 - a file the audit refuses: said, and counted as no example
                row = {"file": path, "seconds": 0.0, "example": "", "no_example": f"audit failed: {e}"[:400],
                       "counts": {}, "findings": [], "problems": [{"check": p["check"], "named": False,
                                                                   "severity": ""} for p in probs[path]]}
            rows.append(row)
            got = sum(p["named"] for p in row["problems"])
            print(f"{row['seconds']:6.1f}s {path}: {got}/{len(row['problems'])} named; "
                  f"{('example: ' + row['example'][:140]) if row['example'] else 'no example: ' + row['no_example'][:140]}",
                  flush=True)
    finally:
        svc.close()
    files = len(rows)
    with_example = sum(bool(r["example"]) for r in rows)
    known = sum(len(r["problems"]) for r in rows)
    named = sum(p["named"] for r in rows for p in r["problems"])
    named_p01 = sum(p["named"] and p["severity"] in ("P0", "P1") for r in rows for p in r["problems"])
    print(f"\nfiles {files}; with an example call from their own code or package {with_example}; known problems "
          f"{known}, named by a finding {named} (as P0/P1: {named_p01})" + (" [--no-search]" if a.no_search else ""))
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "files": files, "with_example": with_example,
                                            "known": known, "named": named, "named_p0_p1": named_p01,
                                            "no_search": a.no_search}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
