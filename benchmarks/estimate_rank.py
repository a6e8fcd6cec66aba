"""Does the no-GPU ESTIMATE at the problem's size rank the gallery stages as a GPU measures them? (issue 40)

    # on the GPU (benchmarks/gpu_parts/estimate_rank.sh): time the stages the CPU estimated, at the same sizes
    python benchmarks/estimate_rank.py time --budget 200 [--only softmax,matmul] --out $OUT/estimate_rank_gpu.json
    # anywhere: compare a GPU JSON with the CPU estimates (benchmarks/estimate_gallery.py's JSON)
    python benchmarks/estimate_rank.py compare GPU_JSON [--estimates benchmarks/results/estimate_gallery_cpu.json]

`time` calls Service.benchmark (run_benchmark) per example on the stages the estimate JSON holds, with the case set
to the sizes each estimate is for (BENCH_SHAPES' first entry) and the estimate's dtype, torch.compile off (only the
stages' order is asked), one repeat; the JSON is rewritten after every example and no example starts once --budget
is spent. `compare` orders each example's stages by GPU median and by ESTIMATE: two stages within TIE (10 %) of each
other on the GPU are a tie (either order is right); otherwise the estimate must put the faster one first (a swap if
not, and a miss too if it gives both the same figure). An example is "ranked as measured" with no swap and no miss.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

ESTIMATES = ROOT / "benchmarks" / "results" / "estimate_gallery_cpu.json"
TIE = 0.10  # GPU medians within 10 % of each other: either order is right
EST_TIE = 1e-3  # estimates within 0.1 %: the estimate does not separate the two stages
# Timed first: examples whose stages differ most on the H200 (2026-12-03 table), so a cut budget keeps them.
# Then those with no earlier stage 1/2 medians; last those whose stages all tied within 10 % there.
ORDER = ["matmul", "cross_entropy", "prefix_scan", "layernorm", "logsumexp", "geglu", "swiglu", "rope",
         "flash_attention", "fused_linear_cross_entropy", "softmax", "rmsnorm", "vector_add"]


def load_estimates(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """example -> stage -> estimate row (only stages whose estimate succeeded)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for key, row in json.loads(path.read_text())["stages"].items():
        ex, stage = key.split("/", 1)
        if row.get("ok"):
            out.setdefault(ex, {})[stage] = row
    return out


def gpu_key(name: str | None) -> str:
    """The estimate's GPU column for a device name ('NVIDIA H100 80GB HBM3' -> H100); H200 when unknown."""
    return "H100" if name and "H100" in name else "H200"


def _rel(a: float, b: float) -> float:
    return max(a, b) / min(a, b) - 1.0 if min(a, b) > 0 else float("inf")


def rank_example(gpu_ms: dict[str, float | None], est_us: dict[str, float]) -> dict[str, Any]:
    """Per example: both orders, and every pair of stages judged: GPU tie, agree, swap, or estimate tie (a miss)."""
    stages = sorted(s for s in gpu_ms if gpu_ms[s] and s in est_us)
    res: dict[str, Any] = {"stages": stages, "gpu_order": sorted(stages, key=lambda s: gpu_ms[s]),
                           "estimate_order": sorted(stages, key=lambda s: est_us[s]), "gpu_ties": [], "agree": [],
                           "swaps": [], "estimate_ties": [], "missing": sorted(set(gpu_ms) ^ set(est_us))}
    for a, b in combinations(stages, 2):
        ga, gb, ea, eb = gpu_ms[a], gpu_ms[b], est_us[a], est_us[b]
        assert ga is not None and gb is not None
        pair = f"{a} {ga:.4g} ms vs {b} {gb:.4g} ms (estimate {ea:.4g} vs {eb:.4g} µs)"
        if _rel(ga, gb) <= TIE:
            res["gpu_ties"].append(pair)
        elif _rel(ea, eb) <= EST_TIE:
            res["estimate_ties"].append(pair)
        elif (ga < gb) == (ea < eb):
            res["agree"].append(pair)
        else:
            res["swaps"].append(pair)
    judged = len(res["agree"]) + len(res["swaps"]) + len(res["estimate_ties"])
    res["kendall_tau"] = (len(res["agree"]) - len(res["swaps"]) - len(res["estimate_ties"])) / judged if judged \
        else None  # over the pairs the GPU separates; an estimate tie counts against
    res["ranked"] = len(stages) >= 2 and not res["swaps"] and not res["estimate_ties"]
    return res


def compare(gpu: dict[str, Any], estimates: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """Every example of the GPU JSON against the estimates; the summary counts examples with two stages or more."""
    col = gpu_key(gpu.get("gpu"))
    per: dict[str, Any] = {}
    for ex, rec in gpu.get("examples", {}).items():
        est = {s: float(r["estimate_us"][col]) for s, r in estimates.get(ex, {}).items()}
        ms = {s: (t or {}).get("median_ms") for s, t in rec.get("stages", {}).items()}
        res = rank_example(ms, est)
        mismatch = [s for s in res["stages"] if estimates[ex][s].get("estimated_for") is not None
                    and rec.get("shape") is not None and list(estimates[ex][s]["estimated_for"]) != list(rec["shape"])]
        res["size_mismatch"] = mismatch  # timed at other sizes than estimated for: not comparable
        if mismatch:
            res["ranked"] = False
        per[ex] = res
    counted = [ex for ex, r in per.items() if len(r["stages"]) >= 2]
    ranked = [ex for ex in counted if per[ex]["ranked"]]
    return {"gpu": gpu.get("gpu"), "estimate_column": col, "tie": TIE, "examples": per, "counted": counted,
            "ranked": ranked, "summary": f"ranked as measured: {len(ranked)} of {len(counted)} examples"}


def print_comparison(cmp: dict[str, Any], gpu: dict[str, Any], estimates: dict[str, Any]) -> None:
    """One line per stage, the orders and judged pairs per example, then the summary line."""
    col = cmp["estimate_column"]
    print(f"{'example':<28}{'stage':<11}{'GPU ms':>10}{'EST µs':>10}  bound / note")
    for ex, res in cmp["examples"].items():
        for s in sorted(set(gpu["examples"][ex].get("stages", {})) | set(estimates.get(ex, {}))):
            t = gpu["examples"][ex].get("stages", {}).get(s) or {}
            e = estimates.get(ex, {}).get(s) or {}
            note = t.get("error") or "; ".join(t.get("suspect") or [])[:80]
            ms = t.get("median_ms")
            est = (e.get("estimate_us") or {}).get(col)
            print(f"{ex:<28}{s:<11}{ms if ms is not None else float('nan'):>10.4f}"
                  f"{est if est is not None else float('nan'):>10.1f}  {(e.get('bound') or {}).get(col, '-')} {note}")
        verdict = "yes" if res["ranked"] else ("n/a (<2 stages)" if len(res["stages"]) < 2 else "NO")
        print(f"  {ex}: by GPU {' < '.join(res['gpu_order'])}; by ESTIMATE {' < '.join(res['estimate_order'])}; "
              f"same order (10 % GPU ties): {verdict}")
        for kind in ("swaps", "estimate_ties", "gpu_ties"):
            for p in res[kind]:
                print(f"    {kind[:-1].replace('_', ' ')}: {p}")
        if res["size_mismatch"]:
            print(f"    timed at {gpu['examples'][ex].get('shape')}, estimated for other sizes: {res['size_mismatch']}")
    print(f"pairs within {int(100 * cmp['tie'])} % of each other on the GPU count as ties (either order is right); "
          f"an estimate that gives two separated stages the same figure is a miss")
    print(cmp["summary"] + f" (GPU {cmp['gpu']}, ESTIMATE column {col})")


def time_gallery(estimates: dict[str, dict[str, dict[str, Any]]], only: list[str] | None, budget: float,
                 out: Path, repeats: int) -> dict[str, Any]:
    """run_benchmark of each example's estimated stages at the estimate's sizes and dtype; JSON after each."""
    from pytorch_to_triton.service import Service

    ws = Path(tempfile.mkdtemp(prefix="p2t_rank_"))
    names = only or [n for n in ORDER if n in estimates] + sorted(set(estimates) - set(ORDER))
    data: dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "budget_s": budget,
                            "gpu": None, "examples": {}, "not_timed": []}
    t0 = time.monotonic()
    svc = Service(ws)
    try:
        for ex in names:
            left = budget - (time.monotonic() - t0)
            if left < 15:
                data["not_timed"].append(ex)
                continue
            shutil.copytree(ROOT / "examples" / ex, ws / ex, dirs_exist_ok=True)
            stages = sorted(estimates.get(ex, {}))
            first = estimates[ex][stages[0]]
            shape, dtype = list(first["estimated_for"]), first.get("dtype")
            t1 = time.monotonic()
            rec: dict[str, Any] = {"shape": shape, "dtype": dtype, "stages": {}}
            try:
                rep = svc.benchmark(reference=f"{ex}/reference.py", candidates=[f"{ex}/{s}" for s in stages],
                                    cases=[{"name": "estimated_for", "shape": shape}], dtype=dtype, compile="none",
                                    repeats=repeats, timeout_s=max(10.0, left))
                data["gpu"] = data["gpu"] or (rep.environment or {}).get("gpu")
                for t in rep.timings:
                    row = {"median_ms": t.median_ms, "ok": t.ok, "error": t.error, "suspect": t.suspect or None,
                           "host_ms_per_call": t.host_ms_per_call}
                    if t.impl == "eager":
                        rec["eager"] = row
                    else:
                        rec["stages"][Path(t.impl).name] = row
                if not rep.timings:
                    rec["error"] = rep.verdict
            except Exception as e:  # noqa: BLE001 - one example failing must not stop the rest
                rec["error"] = f"{type(e).__name__}: {str(e)[:400]}"
            rec["wall_s"] = round(time.monotonic() - t1, 1)
            data["examples"][ex] = rec
            out.write_text(json.dumps(data, indent=1, default=str))
            meds = ", ".join(f"{s} {(r or {}).get('median_ms') or float('nan'):.4f}" for s, r in rec["stages"].items())
            print(f"{ex}: {meds or rec.get('error')} ms ({rec['wall_s']} s)", flush=True)
    finally:
        svc.close()
        data["wall_s"] = round(time.monotonic() - t0, 1)
        out.write_text(json.dumps(data, indent=1, default=str))
    return data


def merge(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Several GPU JSONs (calls that each timed some examples) as one; a later run's example replaces an earlier's."""
    names = {r.get("gpu") for r in runs if r.get("gpu")}
    if len(names) > 1:
        raise SystemExit(f"GPU JSONs from different GPUs ({', '.join(sorted(names))}): compare them one at a time")
    out: dict[str, Any] = {"gpu": next(iter(names), None), "examples": {}, "not_timed": []}
    for r in runs:
        out["examples"].update(r.get("examples", {}))
    out["not_timed"] = sorted({n for r in runs for n in r.get("not_timed", [])} - set(out["examples"]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("time", help="time the estimated stages on this machine's GPU, then compare")
    t.add_argument("--budget", type=float, default=200.0, help="seconds; no example starts once spent")
    t.add_argument("--only", help="comma-separated examples (default: every estimated example, ORDER first)")
    t.add_argument("--repeats", type=int, default=1)
    t.add_argument("--out", required=True)
    c = sub.add_parser("compare", help="compare a GPU JSON (from `time`, or earlier medians) with the estimates")
    c.add_argument("gpu_json", nargs="+", help="one or more (several calls' examples are merged)")
    for p in (t, c):
        p.add_argument("--estimates", default=str(ESTIMATES))
        p.add_argument("--json-out", help="write the comparison here")
    a = ap.parse_args()
    estimates = load_estimates(Path(a.estimates))
    if a.cmd == "time":
        gpu = time_gallery(estimates, a.only.split(",") if a.only else None, a.budget, Path(a.out), a.repeats)
    else:
        gpu = merge([json.loads(Path(p).read_text()) for p in a.gpu_json])
    cmp = compare(gpu, estimates)
    print_comparison(cmp, gpu, estimates)
    if gpu.get("not_timed"):
        print(f"not timed (budget spent): {', '.join(gpu['not_timed'])}")
    if a.json_out:
        Path(a.json_out).write_text(json.dumps(cmp, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
