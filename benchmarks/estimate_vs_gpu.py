"""Does the no-GPU roofline ESTIMATE rank stages as the GPU does? (issue 29 item 7). About 1-2 minutes on an H200.

    PYTHONPATH=$PWD/.site:$PWD/server python3 benchmarks/estimate_vs_gpu.py

For each fixture set in tests/estimate_fixtures, at a size big enough to be bandwidth- or compute-bound:
1. run_benchmark on the GPU: median ms per candidate;
2. the ESTIMATE for the same candidates and case from a second Service whose worker sees no GPU (Triton's
   interpreter counts at the validation size and scales to this case): µs on the H200 (datasheet peaks);
3. per set: does the estimate order the candidates as the medians do, and measured / estimate per candidate
   (how far the datasheet roofline is from reality: above 1 for a streaming kernel, which cannot beat the
   datasheet bandwidth; possibly below 1 for the 32-tiled matmul, whose counted rereads L2 serves).
JSON goes to $OUT/estimate_vs_gpu.json (default /tmp/out).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from pytorch_to_triton.roofline_estimate import no_gpu_benchmark  # noqa: E402
from pytorch_to_triton.service import Service  # noqa: E402

OUT = Path(os.environ.get("OUT") or "/tmp/out")
FIX = ROOT / "tests" / "estimate_fixtures"
# (reference, candidates, the case to time and to scale to)
SETS = [
    ("softmax_reference.py", ["softmax_one_pass.py", "softmax_recompute.py"], {"name": "big", "shape": [65536, 781]}),
    ("vadd_reference.py", ["vadd_stage1.py"], {"name": "big", "shape": [1 << 26]}),
    ("matmul_reference.py", ["matmul_tiled.py"], {"name": "big", "shape": [4096, 4096, 4096]}),
]


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    ws = Path(tempfile.mkdtemp(prefix="p2t_est_"))
    for p in FIX.glob("*.py"):
        shutil.copy(p, ws / p.name)
    measured: dict[str, dict[str, float | None]] = {}
    svc = Service(ws)
    try:
        for ref, cands, case in SETS:
            rep = svc.benchmark(reference=ref, candidates=cands, cases=[case], repeats=3)
            measured[ref] = {Path(t.impl).name: t.median_ms for t in rep.timings
                             if t.impl not in ("eager", "torch.compile")}
            measured[ref].update({f"baseline:{t.impl}": t.median_ms for t in rep.timings
                                  if t.impl in ("eager", "torch.compile")})
    finally:
        svc.close()
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the second worker sees no GPU: Triton's interpreter counts
    cpu = Service(ws, device="cpu")
    result: dict = {"sets": []}
    try:
        for ref, cands, case in SETS:
            base = {"workspace": str(ws), "reference": str(ws / ref), "reference_entry": None,
                    "candidate_entry": None, "dtype": None, "cases": [case], "sweep": None, "sizes": None}
            est = no_gpu_benchmark(cpu, ws / ref, [ws / c for c in cands], base, "H200", 900)
            rows = []
            for e in est.model_extra["estimate"]:
                ms = measured[ref].get(e["stage"])
                est_us = (e.get("times") or {}).get("est_us")
                rows.append({"stage": e["stage"], "ok": e.get("ok"), "error": e.get("error"),
                             "measured_ms": ms, "estimate_us": est_us,
                             "measured_over_estimate": (ms * 1e3 / est_us) if ms and est_us else None,
                             "bound": (e.get("times") or {}).get("bound"), "scaled": e.get("scaled"),
                             "measured_sizes": e.get("measured_sizes")})
            timed = [r for r in rows if r["measured_ms"] and r["estimate_us"]]
            same_order = ([r["stage"] for r in sorted(timed, key=lambda r: r["measured_ms"])] ==
                          [r["stage"] for r in sorted(timed, key=lambda r: r["estimate_us"])])
            result["sets"].append({"reference": ref, "case": case, "rows": rows, "same_order": same_order,
                                   "baselines_ms": {k: v for k, v in measured[ref].items() if k.startswith("baseline")}})
    finally:
        cpu.close()
    (OUT / "estimate_vs_gpu.json").write_text(json.dumps(result, indent=2, default=str))
    print(f"{'set':<22}{'stage':<24}{'GPU ms':>10}{'ESTIMATE µs':>13}{'meas/est':>10}  bound")
    for s in result["sets"]:
        for r in s["rows"]:
            ratio = r["measured_over_estimate"]
            print(f"{s['reference']:<22}{r['stage']:<24}{r['measured_ms'] or float('nan'):>10.4f}"
                  f"{r['estimate_us'] or float('nan'):>13.1f}{ratio or float('nan'):>10.2f}  {r['bound']}")
        print(f"{'':<22}same order: {s['same_order']}")
    ok = all(s["same_order"] for s in result["sets"])
    print(f"\nevery set ranked as on the GPU: {ok}; JSON: {OUT / 'estimate_vs_gpu.json'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
