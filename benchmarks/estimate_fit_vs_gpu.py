"""Issue 40 item 3 on the GPU: does the no-GPU ESTIMATE, fitted per size at small counted sizes and extrapolated to
the problem's own sizes, rank KernelBench stages as the GPU's medians do? About 3 minutes on an H100/H200.

    PYTHONPATH=$PWD/.site:$PWD/server python3 benchmarks/estimate_fit_vs_gpu.py [PROBLEM ...]

For each problem folder of benchmarks/trials/2026-12-04 (or those named): run_benchmark of stage1..3 on the GPU at
the problem's full size (the sidecar's [sizes] removed, so the GPU times what the estimate is for), then the
ESTIMATE of the same stages from a Service whose worker sees no GPU. Printed per stage: GPU median ms, ESTIMATE µs,
the sizes estimated for, the fit's largest relative error on its held-back run. What confirms the work: same order
per problem, and held-back errors of a few percent. JSON: $OUT/estimate_fit_vs_gpu.json.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from pytorch_to_triton.roofline_estimate import no_gpu_benchmark  # noqa: E402
from pytorch_to_triton.service import Service  # noqa: E402

OUT = Path(os.environ.get("OUT") or "/tmp/out")
TRIALS = ROOT / "benchmarks" / "trials" / "2026-12-04"
STAGES = ["stage1.py", "stage2.py", "stage3.py"]


def _copy(problem: str, ws: Path) -> Path:
    dst = ws / problem
    shutil.copytree(TRIALS / problem, dst)
    side = dst / "reference.p2t.toml"
    if side.exists():  # full size on the GPU: the interpreter's [sizes] pins go, the rest of the sidecar stays
        text = re.sub(r"(?ms)^\[sizes\]\n(?:(?!\[).*\n)*", "", side.read_text())
        side.write_text(text)
    return dst


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    problems = sys.argv[1:] or sorted(p.name for p in TRIALS.iterdir() if (p / "reference.py").exists())
    ws = Path(tempfile.mkdtemp(prefix="p2t_fit_"))
    dirs = {p: _copy(p, ws) for p in problems}
    measured: dict[str, dict[str, float | None]] = {}
    svc = Service(ws)
    try:
        for p in dirs:
            rep = svc.benchmark(reference=f"{p}/reference.py", candidates=[f"{p}/{s}" for s in STAGES], repeats=3)
            measured[p] = {Path(t.impl).name: t.median_ms for t in rep.timings}
    finally:
        svc.close()
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the second worker sees no GPU: the interpreter counts and fits
    cpu = Service(ws, device="cpu")
    result = []
    print(f"{'problem':<34}{'stage':<11}{'GPU ms':>9}{'EST µs':>10}{'held-back err':>15}  estimated for / note",
          flush=True)
    try:
        for p, d in dirs.items():  # each problem printed and saved as it finishes (a part's limit may cut the rest)
            base = {"workspace": str(ws), "reference": str(d / "reference.py"), "reference_entry": None,
                    "candidate_entry": None, "dtype": None, "cases": None, "sweep": None, "sizes": None}
            t0 = time.perf_counter()
            est = no_gpu_benchmark(cpu, d / "reference.py", [d / s for s in STAGES], base, "H100", 600)
            rows = []
            for e in est.model_extra["estimate"]:
                fit = e.get("fit") or {}
                held = fit.get("held_back") or {}
                rows.append({"stage": e["stage"], "ok": e.get("ok"), "error": e.get("error"),
                             "gpu_ms": measured[p].get(e["stage"]), "estimate_us": (e.get("times") or {}).get("est_us"),
                             "estimated_for": e.get("estimated_for"), "fit_sizes": fit.get("sizes"),
                             "held_back_error": held.get("max_relative_error"), "fit_note": e.get("fit_note")})
            timed = [r for r in rows if r["gpu_ms"] and r["estimate_us"]]
            same = ([r["stage"] for r in sorted(timed, key=lambda r: r["gpu_ms"])] ==
                    [r["stage"] for r in sorted(timed, key=lambda r: r["estimate_us"])])
            s = {"problem": p, "rows": rows, "same_order": same, "timed": len(timed),
                 "estimate_s": round(time.perf_counter() - t0, 1)}
            result.append(s)
            (OUT / "estimate_fit_vs_gpu.json").write_text(json.dumps(result, indent=2, default=str))
            for r in rows:
                err = r["held_back_error"]
                print(f"{p:<34}{r['stage']:<11}{r['gpu_ms'] or float('nan'):>9.4f}"
                      f"{r['estimate_us'] or float('nan'):>10.1f}"
                      f"{(100 * err if err is not None else float('nan')):>14.1f}%"
                      f"  {r['estimated_for'] or ''} {r['fit_note'] or r['error'] or ''}"[:260], flush=True)
            print(f"{'':<34}same order as the GPU ({s['timed']} stages timed and estimated): {same}; "
                  f"estimate took {s['estimate_s']} s", flush=True)
    finally:
        cpu.close()
    ok = bool(result) and all(s["same_order"] for s in result)
    print(f"\nevery problem ranked as on the GPU: {ok}; JSON: {OUT / 'estimate_fit_vs_gpu.json'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
