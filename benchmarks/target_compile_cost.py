"""What the CPU-side compile for sm_90 adds to a CPU validation of the gallery (issues 36 and 46; bar: under 25 %).

    PYTHONPATH=$PWD/server python benchmarks/target_compile_cost.py [--only softmax] [--repeat 2]

Per gallery stage, on one warm worker, trials=1 (the least favourable ratio): base (target_gpus "none"), cold (sm_90
with the target-compile and Triton caches emptied) and warm (sm_90 again: what a re-validation costs). Base and cold
alternate in order from stage to stage (a drifting load favours neither), each after an untimed validation that warms
the reference's cached outputs and the worker's imports; each row carries the load average before and after and the
full-size dry run's seconds. Prints a table and the totals; JSON to $OUT/target_compile_cost.json. CPU figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated: only stages whose path contains one of these")
    ap.add_argument("--repeat", type=int, default=1, help="base/cold pairs per stage (the medians are kept)")
    a = ap.parse_args()
    from pytorch_to_triton.service import Service

    svc = Service(ROOT)
    caches = [svc.ws.state_dir / "triton_cache"]
    rows = []
    stages = [s for s in sorted(ROOT.glob("examples/*/stage*.py"))
              if not a.only or any(w in str(s) for w in a.only.split(","))]

    def empty_caches() -> None:  # keep the folders (a confined worker's rules hold on them)
        for c in caches:
            for p in c.glob("*"):
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)

    try:
        for n, stage in enumerate(stages):
            ref, cand = str((stage.parent / "reference.py").relative_to(ROOT)), str(stage.relative_to(ROOT))
            # untimed, right before: the reference's cached outputs (ref_cache keeps 16 MiB, not every stage's)
            svc.validate(reference=ref, candidates=[cand], trials=1, target_gpus="none")
            rec: dict = {"stage": cand, "load_before": round(os.getloadavg()[0], 2)}
            order = [m for _ in range(a.repeat) for m in (("base", "cold") if n % 2 == 0 else ("cold", "base"))]
            times: dict[str, list[float]] = {"base": [], "cold": [], "warm": []}
            for mode in order + ["warm"]:
                if mode == "cold":
                    empty_caches()
                t0 = time.perf_counter()
                rep = svc.validate(reference=ref, candidates=[cand], trials=1,
                                   target_gpus="none" if mode == "base" else "sm_90")
                times[mode].append(round(time.perf_counter() - t0, 2))
                c = rep.candidates[0]
                if mode != "base":
                    tc = c.model_dump().get("target_compile") or {}
                    rec[f"{mode}_rows"] = len(tc.get("rows") or [])
                    rec[f"{mode}_to_cubin"] = tc.get("configs_to_cubin")
                    rec[f"{mode}_wait_s"] = tc.get("wait_s")
                    rec[f"{mode}_child_s"] = tc.get("child_s")  # the child's imports, frontend, full compiles
                    rec["failed"] = sum(r.get("ok") is False for r in tc.get("rows") or [])
                    rec[f"{mode}_notes"] = [x[:200] for x in tc.get("notes") or []]
                rec[f"{mode}_ok"] = c.ok
                rec[f"{mode}_dry_run_s"] = (c.model_dump().get("full_size") or {}).get("seconds")  # issue 46's
                if not c.ok:
                    rec[f"{mode}_why"] = c.verdict_line + "; " + "; ".join(f.message[:160] for f in c.findings[:2])
            for m, ts in times.items():
                rec[m] = sorted(ts)[len(ts) // 2]
                rec[f"{m}_all"] = ts
            rec["order"] = order
            rec["load_after"] = round(os.getloadavg()[0], 2)
            rec["cold_pct"] = round(100 * (rec["cold"] / rec["base"] - 1), 1)
            rec["warm_pct"] = round(100 * (rec["warm"] / rec["base"] - 1), 1)
            rows.append(rec)
            print(json.dumps(rec), flush=True)
    finally:
        svc.close()
    tot = {m: round(sum(r[m] for r in rows), 1) for m in ("base", "cold", "warm")}
    summary = {"stages": len(rows), **tot, "cold_pct": round(100 * (tot["cold"] / tot["base"] - 1), 1),
               "warm_pct": round(100 * (tot["warm"] / tot["base"] - 1), 1)}
    out = Path(os.environ.get("OUT", "/tmp/out"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "target_compile_cost.json").write_text(json.dumps({"rows": rows, "summary": summary}, indent=1))
    print("| stage | base s | cold s | warm s | cold % | warm % | configs (to a cubin) | compile failures | load |")
    for r in rows:
        print(f"| {r['stage']} | {r['base']} | {r['cold']} | {r['warm']} | {r['cold_pct']} | {r['warm_pct']} | "
              f"{r.get('cold_rows')} ({r.get('cold_to_cubin')}) | {r.get('failed')} | "
              f"{r['load_before']}-{r['load_after']} |")
    print(f"total over {summary['stages']} stages: base {tot['base']} s, cold {tot['cold']} s "
          f"({summary['cold_pct']:+} %), warm {tot['warm']} s ({summary['warm_pct']:+} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
