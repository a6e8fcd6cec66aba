"""The no-GPU ESTIMATE of every gallery and trial stage at the size run_benchmark times, computed on this CPU.

    PYTHONPATH=$PWD/server python benchmarks/estimate_gallery.py [--only softmax,45_Gemm] [--budget 3600]
        [--out benchmarks/results/estimate_gallery_cpu.json] [--redo] [--compile every|must]

For each examples/<name>/stage*.py and benchmarks/trials/<date>/<problem>/stage*.py against its reference.py:
run_benchmark's no-GPU path as a user gets it (roofline_estimate.no_gpu_benchmark on a CPU worker: the dry run at
the problem's size, a few programs of each launch under the interpreter, the torch ops beside them), one stage per
call. --compile must (the default here) compiles only each kernel's launched config and the two likeliest to
overflow to a cubin (every config still passes Triton's frontend, which names its meta-parameters for the count);
`every`, what a user's call does, compiles them all (minutes per autotuned stage on a loaded 2-core VM, cached).
Saved per stage: the worker's record as the journal keeps it (launches, torch ops, totals: roofline_estimate.
stage_time turns it into µs for any GPU, so the model can be re-read without counting again), the ESTIMATE µs on
the H200 and the H100 at the time of the run, the wall time and the notes. Resumable: stages already in the JSON
are skipped (--redo counts them again); the JSON is rewritten after every stage. --budget (seconds) stops starting
new stages once spent. benchmarks/gpu_parts/estimate_vs_h100.sh times the same stages on an H100 and compares.
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
from pytorch_to_triton.roofline_estimate import _lean, error_of, no_gpu_benchmark, stage_time  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "results" / "estimate_gallery_cpu.json"
GPUS = ("H200", "H100")
STAGE_TIMEOUT_S = 1800.0
TRIALS = ("benchmarks/trials/2026-12-04", "benchmarks/trials/2026-12-06")


def folders(only: list[str] | None) -> list[tuple[str, list[str]]]:
    """(folder relative to the repo, [stage files]) for every gallery example and trial problem (--only: names or
    name prefixes, in that order)."""
    found = [f"examples/{p.name}" for p in sorted((ROOT / "examples").iterdir()) if (p / "reference.py").is_file()]
    for t in TRIALS:
        found += [f"{t}/{p.name}" for p in sorted((ROOT / t).iterdir()) if (p / "reference.py").is_file()]
    if only:
        found = [f for o in only for f in found if Path(f).name.startswith(o)]
    return [(f, sorted(p.name for p in (ROOT / f).glob("stage*.py"))) for f in found]


def record(rec: dict[str, Any]) -> dict[str, Any]:
    """What stage_time needs of a worker record (as the journal keeps it)."""
    keep = ("ok", "estimated_for", "sizes_label", "dtype", "scaled", "fallback", "library", "method", "error",
            "full_size_findings", "total_launches")
    out = {k: rec.get(k) for k in keep if k in rec}
    out["launches"] = _lean(rec.get("launches"))
    out["reference_full"] = {k: v for k, v in (rec.get("reference_full") or {}).items() if k != "ops"}
    out["reference_ops"] = (rec.get("reference_full") or {}).get("ops")
    return out


def row(rec: dict[str, Any], notes: list[str], wall_s: float) -> dict[str, Any]:
    """One stage's JSON row: its record and its ESTIMATE per GPU now."""
    out: dict[str, Any] = {"ok": bool(rec.get("ok")), "wall_s": round(wall_s, 1), "record": record(rec)}
    if not rec.get("ok"):
        out["error"] = rec.get("error")
        return out
    by_gpu = {g: stage_time(rec, gpu_peaks.lookup(g)) for g in GPUS}
    out.update({"estimate_us": {g: t["est_us"] for g, t in by_gpu.items()},
                "bound": {g: t["bound"] for g, t in by_gpu.items()}, "error": error_of(rec)["text"],
                "estimated_for": rec.get("estimated_for"), "dtype": rec.get("dtype"), "notes": notes})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated example or problem names (prefixes)")
    ap.add_argument("--budget", type=float, default=4 * 3600.0, help="seconds; no new stage starts once spent")
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--redo", action="store_true", help="count stages already in the JSON again")
    ap.add_argument("--compile", choices=("every", "must"), default="must",
                    help="configs compiled to a cubin for sm_90 (the frontend names every config either way)")
    a = ap.parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the estimate is the no-GPU path, even on a machine with one
    from pytorch_to_triton.service import Service

    out = Path(a.out)
    data: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    if data.get("method") != "dry run":  # an earlier method's JSON (fitted counts): not comparable, start afresh
        data = {"method": "dry run"}
    data.setdefault("stages", {})
    data.setdefault("runs", [])
    run = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "loadavg_start": os.getloadavg(),
           "cpus": os.cpu_count(), "budget_s": a.budget, "compile": a.compile}
    data["runs"].append(run)
    data["what"] = ("run_benchmark's no-GPU ESTIMATE per gallery and trial stage at the size run_benchmark times "
                    "(the dry run's launch list, counted per program under Triton's interpreter here)")
    ws = Path(tempfile.mkdtemp(prefix="p2t_estgal_"))  # the journal and caches go there, not into the checkout
    t_start = time.monotonic()
    svc = Service(ws, device="cpu")
    stop = False
    try:
        for folder, stages in folders(a.only.split(",") if a.only else None):
            shutil.copytree(ROOT / folder, ws / folder, dirs_exist_ok=True)
            for st in stages:
                key = f"{folder}/{st}"
                if key in data["stages"] and not a.redo:
                    continue
                left = a.budget - (time.monotonic() - t_start)
                if left <= 0:
                    print(f"budget of {a.budget:.0f} s spent: {key} and the rest not started", flush=True)
                    run["stopped_by_budget"] = stop = True
                    break
                print(f"{key}: counting (load {os.getloadavg()[0]:.1f}) ...", flush=True)
                t0 = time.monotonic()
                try:
                    ref = ws / folder / "reference.py"
                    base = {"workspace": str(ws), "reference": str(ref), "reference_entry": None,
                            "candidate_entry": None, "dtype": None, "cases": [], "sweep": None, "sizes": None,
                            "compile_budget": a.compile}
                    rep = no_gpu_benchmark(svc, ref, [ws / folder / st], base, "H100",
                                           min(STAGE_TIMEOUT_S, max(60.0, left)))
                    rec = (rep.model_extra or {}).get("estimate") or [{"ok": False, "error": rep.verdict}]
                    r = row(rec[0], [n for n in rep.notes if not n.startswith("ESTIMATE, not")],
                            time.monotonic() - t0)
                except Exception as e:  # noqa: BLE001 - a stage that cannot be estimated is a finding, not a stop
                    r = {"ok": False, "error": f"{type(e).__name__}: {str(e)[:500]}",
                         "wall_s": round(time.monotonic() - t0, 1)}
                data["stages"][key] = r
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(data, indent=1, default=str))
                if r["ok"]:
                    print(f"{key}: ESTIMATE {r['estimate_us']['H100']:.4g} µs H100 ({r['bound']['H100']}; "
                          f"{r['error']}), for {r['estimated_for']}; {r['wall_s']} s", flush=True)
                else:
                    print(f"{key}: NOT ESTIMATED: {str(r['error'])[:300]}; {r['wall_s']} s", flush=True)
            if stop:
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
