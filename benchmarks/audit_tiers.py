"""The audit's tiers on labelled fixtures (issue 35): a clean kernel gets no P0/P1, a robustness-only failure is
reported apart under its kind, a contract bug is a P0 with its "assumed:" line, code ModelNew never reaches gets
notes only. One row per fixture; exit 1 when any differs. CPU ~3 min (gpu_parts/tiers.sh runs it on CUDA).

    PYTHONPATH=$PWD/server python3 benchmarks/audit_tiers.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
FIX = "tests/audit_probe_fixtures"

# file, harness (None: reference=), reference, P0 checks expected, robustness kinds expected, text the report holds
CASES = [
    ("linear_contig_weight.py", "harness_linear.py", None, [], [], "w contiguous (linear calls .contiguous())"),
    ("linear_contig_weight_bad.py", "harness_linear.py", None, ["probe_layout"], [],
     "assumed: w contiguous (linear calls .contiguous())"),
    ("scale_fp16_only.py", "harness_scale2.py", None, [], [], "x float16 (scale2 asserts it)"),
    ("rows_no_empty.py", "harness_rowsum.py", None, [], ["empty"], "batch >= 1 (default)"),
    ("kb_affine_unreached_helper.py", None, "tests/kernelbench_fixtures/affine_reference.py", [], [],
     "note: NewGELU.forward is not reached"),
    ("linear_dense_weight.py", "harness_linear.py", None, [], ["weight"], ""),
    ("geglu_even.py", "harness_geglu.py", None, [], ["structure"], ""),
    ("rows_stride_lastdim.py", "harness_scale_rows.py", None, [], ["lastdim"], ""),
    ("minp_filter.py", "harness_minp.py", None, [], ["1d"], ""),
    ("matmul_tf32.py", "harness_matmul.py", None, [], ["precision"], ""),
]


def main() -> int:
    from pytorch_to_triton.service import Service

    svc = Service(ROOT)
    bad = 0
    rows = ["| fixture | device | P0 | P1 | robustness | expected | ok | s |", "|---|---|---|---|---|---|---|---|"]
    try:
        for file, harness, ref, p0_want, kinds_want, text in CASES:
            t0 = time.monotonic()
            rep = svc.audit(path=f"{FIX}/{file}", harness=f"{FIX}/{harness}" if harness else None, reference=ref,
                            compile=False, timeout_s=600)
            p0 = sorted(f.check for f in rep.findings if f.severity == "P0")
            p1 = sorted(f.check for f in rep.findings if f.severity == "P1")
            kinds = sorted({r.kind for r in rep.robustness})
            dev = next((c.split(" on ")[1].split(";")[0] for c in rep.checked if c.startswith("probes:")), "?")
            blob = rep.markdown.lower() + " ".join(rep.contract).lower()
            ok = p0 == sorted(p0_want) and not p1 and set(kinds_want) <= set(kinds) and text.lower() in blob
            bad += not ok
            rows.append(f"| {file} | {dev} | {', '.join(p0) or '-'} | {', '.join(p1) or '-'} | "
                        f"{', '.join(kinds) or '-'} | P0 {p0_want or '-'}, robustness {kinds_want or '-'} | "
                        f"{'yes' if ok else 'NO'} | {time.monotonic() - t0:.0f} |")
    finally:
        svc.close()
    print("\n".join(rows))
    print(f"{len(CASES) - bad}/{len(CASES)} fixtures as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
