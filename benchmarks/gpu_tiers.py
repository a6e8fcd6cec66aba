"""Issue 25 on the GPU: the tests/cases_fixtures problems at full size, one Service, then a correct call after them.

    PYTHONPATH=$PWD/.site:$PWD/server python3 benchmarks/gpu_tiers.py

What it proves on an H200 (the CPU tests cannot): every correct candidate passes the contract at the problem's
full size (robustness findings named beside the verdict), the planted contract bug still fails with `mismatch`,
strict=true fails the robustness findings, no case anywhere reports a device-side assert (the variants that break
a problem's size relations are rejected on the host before any GPU run), and a correct call made after all of
them still passes in the same server. Writes issue25.json under $OUT (default /tmp/out); exit 1 on any miss.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
FIX = "tests/cases_fixtures"
# reference, candidate, expected ok, robustness kinds it must name, contract check it must fail with
RUNS = [
    ("attn_reference.py", "attn_causal.py", True, set(), None),
    ("ce_reference.py", "ce_chunked.py", True, set(), None),
    ("relu_reference.py", "relu_maximum.py", True, {"nan"}, None),
    ("softmax_reference.py", "softmax_rows.py", True, {"layouts"}, None),
    ("softmax_reference.py", "softmax_rows_contract_bug.py", False, set(), "mismatch"),
    ("vecsoftmax_reference.py", "vecsoftmax_pow2.py", True, {"empty"}, None),
]


def main() -> int:
    """Run every fixture, then strict, then a follow-up correct call; print and save what happened."""
    from pytorch_to_triton.service import Service

    out = Path(os.environ.get("OUT") or "/tmp/out")
    out.mkdir(parents=True, exist_ok=True)
    svc = Service(ROOT)
    rows, misses = [], []
    t0 = time.monotonic()
    try:
        for ref, cand, want_ok, want_kinds, want_check in RUNS:
            for strict in (False, True):
                t = time.monotonic()
                rep = svc.validate(reference=f"{FIX}/{ref}", candidates=[f"{FIX}/{cand}"], trials=1, strict=strict)
                c = rep.candidates[0]
                kinds = {r.kind for r in c.robustness}
                fails = [f.check for f in c.findings if f.severity == "fail"]
                texts = " ".join([rep.summary, *c.notes, *(str(x.error) for x in c.cases if x.error)])
                row = {"candidate": cand, "strict": strict, "ok": rep.ok, "verdict": rep.verdict, "robustness":
                       sorted(kinds), "fails": fails, "device": rep.device, "time_s": round(time.monotonic() - t, 1),
                       "device_side_assert": "device-side assert" in texts, "notes": c.notes[:6]}
                rows.append(row)
                # strict: fails exactly when the plain run named a robustness finding
                expect_ok = want_ok and not (strict and rows[-2]["robustness"])
                if rep.ok != expect_ok or row["device_side_assert"]:
                    misses.append(row)
                elif not strict and (not want_kinds <= kinds or (want_check and want_check not in fails)):
                    misses.append(row)
                print(f"{cand:<32} strict={strict!s:<5} {rep.verdict} {fails} {row['time_s']}s", flush=True)
        follow = svc.validate(reference=f"{FIX}/relu_reference.py", candidates=[f"{FIX}/relu_maximum.py"], trials=1)
        rows.append({"candidate": "follow-up relu_maximum.py", "ok": follow.ok, "verdict": follow.verdict})
        if not follow.ok:
            misses.append(rows[-1])
    finally:
        svc.close()
    result = {"rows": rows, "misses": misses, "wall_s": round(time.monotonic() - t0, 1)}
    (out / "issue25.json").write_text(json.dumps(result, indent=2))
    print(json.dumps({"misses": misses, "wall_s": result["wall_s"]}, indent=2))
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
