"""The no-GPU ESTIMATE of every gallery stage at the size run_benchmark times, computed on this CPU (issue 40).

    PYTHONPATH=$PWD/server python benchmarks/estimate_gallery.py [--only softmax,matmul] [--budget 3600]
        [--out benchmarks/results/estimate_gallery_cpu.json] [--redo]

For each examples/<name>/stage*.py against examples/<name>/reference.py: run_benchmark's no-GPU path as a user gets it
(roofline_estimate.no_gpu_benchmark on a CPU worker, the arguments Service.benchmark passes: counted under Triton's
interpreter, scaled or fitted to the problem's size), one stage per call. One difference, --with-resources undoes it:
the compile of every launch for sm_90 (registers, spills; the answer's resource lines, not its ESTIMATE figure) is
off: on this loaded 2-core VM it took minutes per autotuned stage (softmax stage 2: > 4 min in ptxas). Saved per stage: ESTIMATE µs on the H200 and the H100 (same counts, each GPU's peaks), the bound, the
sizes estimated for and counted at, the scaling rule, the fit's held-back error where a fit ran, the tl.dot precisions
and the notes. Resumable: stages already in the JSON are skipped (--redo counts them again); the JSON is rewritten
after every stage, so a killed run keeps what finished. --budget (seconds) stops starting new stages once spent.
benchmarks/gpu_parts/estimate_rank.sh times the same stages at the same sizes on a GPU and compares the order.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from pytorch_to_triton import gpu_peaks  # noqa: E402
from pytorch_to_triton.roofline_estimate import no_gpu_benchmark, times  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "results" / "estimate_gallery_cpu.json"
GPUS = ("H200", "H100")
STAGE_TIMEOUT_S = 1800.0  # one stage's count (and its fit's runs) under the interpreter on a loaded 2-core VM


def gallery(only: list[str] | None) -> list[tuple[str, list[str]]]:
    """(example, [stage file names]) for every examples/<name>/ with a reference.py, in --only's order if given."""
    names = only or sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "reference.py").is_file())
    return [(n, sorted(p.name for p in (ROOT / "examples" / n).glob("stage*.py"))) for n in names]


def row(rec: dict[str, Any], report: Any, wall_s: float) -> dict[str, Any]:
    """What the comparison needs from one stage's estimate record (report.estimate[0]) and its report."""
    out: dict[str, Any] = {"ok": bool(rec.get("ok")), "wall_s": round(wall_s, 1), "verdict": report.verdict}
    if not rec.get("ok"):
        out["error"] = rec.get("error") or report.verdict
        return out
    scaled = rec.get("scaled") or {}
    by_gpu = {g: times(scaled, gpu_peaks.lookup(g)) for g in GPUS}
    fit = rec.get("fit") or {}
    held = fit.get("held_back") or {}
    out.update({
        "estimate_us": {g: t["est_us"] for g, t in by_gpu.items()},
        "bound": {g: t["bound"] for g, t in by_gpu.items()},
        "t_mem_us": {g: t["t_mem_us"] for g, t in by_gpu.items()},
        "t_dot_us": {g: t["t_dot_us"] for g, t in by_gpu.items()},
        "dtype": rec.get("dtype"), "estimated_for": rec.get("estimated_for") or rec.get("full_sizes"),
        "counted_at": rec.get("measured_sizes"), "measured_at": rec.get("measured_at"),
        "scale_rule": rec.get("scale_rule"), "scale": rec.get("scale"), "scaled": scaled,
        "dot_precisions": sorted(k for k, v in (scaled.get("dot_flops") or {}).items() if float(v)),
        "fit_sizes": fit.get("sizes"), "held_back_sizes": held.get("sizes"),
        "held_back_error": held.get("max_relative_error"), "fit_note": rec.get("fit_note"),
        "measured_note": rec.get("measured_note"), "launches": len(rec.get("launches") or []),
        "notes": [n for n in report.notes if "ESTIMATE, not a measurement" not in n],
    })
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated example names (default: every example)")
    ap.add_argument("--budget", type=float, default=4 * 3600.0, help="seconds; no new stage starts once spent")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--redo", action="store_true", help="count stages already in the JSON again")
    ap.add_argument("--with-resources", action="store_true", help="also compile each launch for sm_90, as a user's "
                    "call does (minutes per autotuned stage here; no effect on the ESTIMATE)")
    a = ap.parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the estimate is the no-GPU path, even on a machine with one
    from pytorch_to_triton.service import Service

    out = Path(a.out)
    data: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    data.setdefault("stages", {})
    data.setdefault("runs", [])
    run = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "loadavg_start": os.getloadavg(),
           "cpus": os.cpu_count(), "budget_s": a.budget, "target_compile": a.with_resources}
    data["runs"].append(run)
    data["what"] = ("run_benchmark's no-GPU ESTIMATE per gallery stage at the size run_benchmark times "
                    "(BENCH_SHAPES' first entry, the reference's DTYPES[0]), counted under Triton's interpreter here")
    ws = Path(tempfile.mkdtemp(prefix="p2t_estgal_"))  # the journal and caches go there, not into the checkout
    t_start = time.monotonic()
    svc = Service(ws, device="cpu")
    try:
        for ex, stages in gallery(a.only.split(",") if a.only else None):
            shutil.copytree(ROOT / "examples" / ex, ws / ex, dirs_exist_ok=True)
            for st in stages:
                key = f"{ex}/{st}"
                if key in data["stages"] and not a.redo:
                    print(f"{key}: already in {out.name}, skipped", flush=True)
                    continue
                left = a.budget - (time.monotonic() - t_start)
                if left <= 0:
                    print(f"budget of {a.budget:.0f} s spent: {key} and the rest not started", flush=True)
                    run["stopped_by_budget"] = True
                    break
                print(f"{key}: counting (load {os.getloadavg()[0]:.1f}) ...", flush=True)
                t0 = time.monotonic()
                try:
                    ref = ws / ex / "reference.py"
                    base = {"workspace": str(ws), "reference": str(ref), "reference_entry": None,
                            "candidate_entry": None, "dtype": None, "cases": [], "sweep": None, "sizes": None}
                    if not a.with_resources:
                        base["target_gpus"] = "none"
                    rep = no_gpu_benchmark(svc, ref, [ws / ex / st], base, "H200",
                                           min(STAGE_TIMEOUT_S, max(60.0, left)))
                    rec = (rep.model_extra or {}).get("estimate") or [{"ok": False, "error": rep.verdict}]
                    r = row(rec[0], rep, time.monotonic() - t0)
                except Exception as e:  # noqa: BLE001 - a stage that cannot be estimated is a finding, not a stop
                    r = {"ok": False, "error": f"{type(e).__name__}: {str(e)[:500]}",
                         "wall_s": round(time.monotonic() - t0, 1)}
                data["stages"][key] = r
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(data, indent=1, default=str))
                if r["ok"]:
                    err = r["held_back_error"]
                    print(f"{key}: ESTIMATE {r['estimate_us']['H200']:.1f} µs H200 / {r['estimate_us']['H100']:.1f} "
                          f"µs H100 ({r['bound']['H200']}), for {r['estimated_for']} counted at {r['counted_at']}"
                          f"{'' if err is None else f', held-back error {100 * err:.1f} %'}; {r['wall_s']} s",
                          flush=True)
                else:
                    print(f"{key}: NOT ESTIMATED: {r['error'][:300]}; {r['wall_s']} s", flush=True)
            else:
                continue
            break
    finally:
        svc.close()
        run.update(finished=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                   wall_s=round(time.monotonic() - t_start, 1), loadavg_end=os.getloadavg())
        out.write_text(json.dumps(data, indent=1, default=str))
    done = sum(1 for r in data["stages"].values() if r.get("ok"))
    print(f"{done} of {len(data['stages'])} stages estimated; wall {run['wall_s']} s; JSON: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
