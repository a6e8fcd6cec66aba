"""Does the no-GPU ESTIMATE size and rank the stages as a GPU measures them? (issues 40, 46)

    PYTHONPATH=$PWD/server python benchmarks/estimate_rank.py count [--only softmax,45_Gemm] [--budget 3600] [--redo]
    python benchmarks/estimate_rank.py time --budget 200 [--only softmax,45_Gemm] --out $OUT/estimate_rank_gpu.json
    python benchmarks/estimate_rank.py compare GPU_JSON [GPU_JSON ...] [--estimates ESTIMATES]

count (CPU, resumable): the ESTIMATE of every gallery and trial stage at the size run_benchmark times, keeping each
worker record for roofline_estimate.stage_time. time (GPU): run_benchmark of those stages at the same sizes and dtype.
compare: each stage's GPU median beside its ESTIMATE (within 2x?) and each folder's two orders; stages within TIE
(10 %) on the GPU are a tie, otherwise the ESTIMATE must order them as the GPU does (a swap if not, a miss if it gives
both one figure). A folder is "ranked as measured" with no swap and no miss.
"""

from __future__ import annotations

import argparse
import json
import os
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
TRIALS = ("trials/2026-12-04", "trials/2026-12-06")
GPUS = ("H200", "H100")  # the ESTIMATE columns `count` saves
STAGE_TIMEOUT_S = 1800.0
TIE = 0.10  # GPU medians within 10 % of each other: either order is right
EST_TIE = 1e-3  # estimates within 0.1 %: the estimate does not separate the two stages
WITHIN = 2.0  # the acceptance: every stage's estimate within 2x of its GPU median
# Timed first: the trial problems (unseen by the model's calibration), then the examples whose stages differ most
# on the GPU, so a cut budget keeps them.
ORDER = ["45_Gemm", "50_ReLU", "62_Matmul", "21_Conv2d", "33_VanillaRNN", "47_NetVlad", "57_Conv2d", "matmul",
         "cross_entropy", "prefix_scan", "layernorm", "logsumexp", "flash_attention", "fused_linear_cross_entropy",
         "geglu", "swiglu", "rope", "softmax", "rmsnorm", "vector_add"]


def load_estimates(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """folder -> stage -> estimate row (only stages whose estimate succeeded)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for key, row in json.loads(path.read_text())["stages"].items():
        folder, stage = _folder(key).rsplit("/", 1)
        if row.get("ok"):
            out.setdefault(folder, {})[stage] = row
    return out


def _folder(key: str) -> str:
    """A stage's key as this tree has it: trials/ moved to the top from benchmarks/trials/ (eb870f7)."""
    return key.removeprefix("benchmarks/")


def gpu_key(name: str | None) -> str:
    """The estimate's GPU column for a device name ('NVIDIA H100 80GB HBM3' -> H100); H200 when unknown."""
    return "H100" if name and "H100" in name else "H200"


def estimate_us(row: dict[str, Any], col: str) -> float:
    """A stage's ESTIMATE on the column's GPU: from its saved counts with today's model, else the saved figure."""
    if row.get("record"):
        from pytorch_to_triton import gpu_peaks
        from pytorch_to_triton.roofline_estimate import stage_time

        return float(stage_time(row["record"], gpu_peaks.lookup(col))["est_us"])
    return float(row["estimate_us"][col])


def _rel(a: float, b: float) -> float:
    return max(a, b) / min(a, b) - 1.0 if min(a, b) > 0 else float("inf")


def rank_example(gpu_ms: dict[str, float | None], est_us: dict[str, float]) -> dict[str, Any]:
    """Per folder: both orders, every pair judged (GPU tie, agree, swap, estimate tie: a miss), and each stage's
    measured / estimate ratio."""
    stages = sorted(s for s in gpu_ms if gpu_ms[s] and s in est_us)
    res: dict[str, Any] = {"stages": stages, "gpu_order": sorted(stages, key=lambda s: gpu_ms[s]),
                           "estimate_order": sorted(stages, key=lambda s: est_us[s]), "gpu_ties": [], "agree": [],
                           "swaps": [], "estimate_ties": [], "missing": sorted(set(gpu_ms) ^ set(est_us)),
                           "ratio": {s: gpu_ms[s] * 1e3 / est_us[s] for s in stages if est_us[s] > 0}}
    res["within"] = {s: 1 / WITHIN <= r <= WITHIN for s, r in res["ratio"].items()}
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
    """Every folder of the GPU JSON against the estimates; the summary counts folders with two stages or more and
    stages within 2x."""
    col = gpu_key(gpu.get("gpu"))
    per: dict[str, Any] = {}
    for ex, rec in gpu.get("examples", {}).items():
        ex = _match(ex, estimates)
        est = {s: estimate_us(r, col) for s, r in estimates.get(ex, {}).items()}
        ms = {s: (t or {}).get("median_ms") for s, t in rec.get("stages", {}).items()}
        res = rank_example(ms, est)
        mismatch = [s for s in res["stages"] if estimates[ex][s].get("estimated_for") is not None
                    and rec.get("shape") is not None and _sizes(estimates[ex][s]["estimated_for"]) !=
                    _sizes(rec["shape"])]
        res["size_mismatch"] = mismatch  # timed at other sizes than estimated for: not comparable
        if mismatch:
            res["ranked"] = False
        per[ex] = res
    counted = [ex for ex, r in per.items() if len(r["stages"]) >= 2]
    ranked = [ex for ex in counted if per[ex]["ranked"]]
    ratios = [(ex, s, r) for ex, res in per.items() for s, r in res["ratio"].items()]
    inside = [x for x in ratios if 1 / WITHIN <= x[2] <= WITHIN]
    return {"gpu": gpu.get("gpu"), "estimate_column": col, "tie": TIE, "examples": per, "counted": counted,
            "ranked": ranked, "within": len(inside), "stages": len(ratios),
            "summary": f"within {WITHIN:g}x: {len(inside)} of {len(ratios)} stages; ranked as measured: {len(ranked)} "
                       f"of {len(counted)} folders"}


def _match(name: str, estimates: dict[str, Any]) -> str:
    """The estimates' folder for a GPU JSON's: the same, or the one it names the end of (an older GPU JSON keys
    gallery examples by their name alone: matmul for examples/matmul)."""
    if name in estimates:
        return name
    return next((k for k in estimates if k.endswith("/" + name)), name)


def _sizes(v: Any) -> Any:
    return dict(v) if isinstance(v, dict) else list(v)


def print_comparison(cmp: dict[str, Any], gpu: dict[str, Any], estimates: dict[str, Any]) -> None:
    """One line per stage (median, ESTIMATE, ratio), the orders and judged pairs per folder, then the summary."""
    col = cmp["estimate_column"]
    print(f"{'folder':<46}{'stage':<11}{'GPU ms':>10}{'EST µs':>11}{'GPU/EST':>9}  2x  note")
    timed = {_match(k, estimates): v for k, v in gpu["examples"].items()}
    for ex, res in cmp["examples"].items():
        for s in sorted(set(timed[ex].get("stages", {})) | set(estimates.get(ex, {}))):
            t = timed[ex].get("stages", {}).get(s) or {}
            e = estimates.get(ex, {}).get(s)
            note = t.get("error") or "; ".join(t.get("suspect") or [])[:80]
            ms = t.get("median_ms")
            est = estimate_us(e, col) if e else None
            ratio = res["ratio"].get(s)
            ok = "" if ratio is None else ("yes" if res["within"][s] else "NO")
            print(f"{ex[-46:]:<46}{s:<11}{ms if ms is not None else float('nan'):>10.4f}"
                  f"{est if est is not None else float('nan'):>11.1f}{ratio if ratio else float('nan'):>9.2f}  "
                  f"{ok:<3} {note}")
        verdict = "yes" if res["ranked"] else ("n/a (<2 stages)" if len(res["stages"]) < 2 else "NO")
        print(f"  {ex}: by GPU {' < '.join(res['gpu_order'])}; by ESTIMATE {' < '.join(res['estimate_order'])}; "
              f"same order (10 % GPU ties): {verdict}")
        for kind in ("swaps", "estimate_ties", "gpu_ties"):
            for p in res[kind]:
                print(f"    {kind[:-1].replace('_', ' ')}: {p}")
        if res["size_mismatch"]:
            print(f"    timed at {timed[ex].get('shape')}, estimated for other sizes: {res['size_mismatch']}")
    print(f"pairs within {int(100 * cmp['tie'])} % of each other on the GPU count as ties (either order is right); "
          f"an estimate that gives two separated stages the same figure is a miss")
    print(cmp["summary"] + f" (GPU {cmp['gpu']}, ESTIMATE column {col})")


def _order(names: list[str]) -> list[str]:
    def rank(folder: str) -> tuple[int, str]:
        base = Path(folder).name
        return next((i for i, o in enumerate(ORDER) if base.startswith(o)), len(ORDER)), folder

    return sorted(names, key=rank)


def time_gallery(estimates: dict[str, dict[str, dict[str, Any]]], only: list[str] | None, budget: float,
                 out: Path, repeats: int) -> dict[str, Any]:
    """run_benchmark of each folder's estimated stages at the estimate's sizes and dtype; JSON after each."""
    from pytorch_to_triton.service import Service

    ws = Path(tempfile.mkdtemp(prefix="p2t_rank_"))
    names = _order([f for f in estimates if not only or any(Path(f).name.startswith(o) for o in only)])
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
            shutil.copytree(ROOT / ex, ws / ex, dirs_exist_ok=True)
            stages = sorted(estimates.get(ex, {}))
            first = estimates[ex][stages[0]]
            shape, dtype = first["estimated_for"], first.get("dtype")
            t1 = time.monotonic()
            rec: dict[str, Any] = {"shape": shape, "dtype": dtype, "stages": {}}
            kw: dict[str, Any] = {"sizes": None} if isinstance(shape, dict) else \
                {"cases": [{"name": "estimated_for", "shape": list(shape)}], "dtype": dtype}
            try:
                rep = svc.benchmark(reference=f"{ex}/reference.py", candidates=[f"{ex}/{s}" for s in stages],
                                    compile="none", repeats=repeats, timeout_s=max(10.0, left), **kw)
                data["gpu"] = data["gpu"] or (rep.environment or {}).get("gpu")
                for t in rep.timings:
                    row = {"median_ms": t.median_ms, "ok": t.ok, "error": t.error, "suspect": t.suspect or None,
                           "host_ms_per_call": t.host_ms_per_call}
                    if t.impl == "eager":
                        rec["eager"] = row
                    elif t.impl != "torch.compile":
                        rec["stages"][Path(t.impl).name] = row
                if not rep.timings:
                    rec["error"] = rep.verdict
            except Exception as e:  # noqa: BLE001 - one folder failing must not stop the rest
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
    """Several GPU JSONs (calls that each timed some folders) as one; a later run's folder replaces an earlier's."""
    names = {r.get("gpu") for r in runs if r.get("gpu")}
    if len(names) > 1:
        raise SystemExit(f"GPU JSONs from different GPUs ({', '.join(sorted(names))}): compare them one at a time")
    out: dict[str, Any] = {"gpu": next(iter(names), None), "examples": {}, "not_timed": []}
    for r in runs:
        out["examples"].update(r.get("examples", {}))
    out["not_timed"] = sorted({n for r in runs for n in r.get("not_timed", [])} - set(out["examples"]))
    return out

def _folders(only: list[str] | None) -> list[tuple[str, list[str]]]:
    """(folder, [stage files]) of every gallery example and trial problem (--only: names or prefixes, in order)."""
    found = [f"examples/{p.name}" for p in sorted((ROOT / "examples").iterdir()) if (p / "reference.py").is_file()]
    for t in TRIALS:
        found += [f"{t}/{p.name}" for p in sorted((ROOT / t).iterdir()) if (p / "reference.py").is_file()]
    if only:
        found = [f for o in only for f in found if Path(f).name.startswith(o)]
    return [(f, sorted(p.name for p in (ROOT / f).glob("stage*.py"))) for f in found]


def _count_row(rec: dict[str, Any], notes: list[str], wall_s: float) -> dict[str, Any]:
    """One stage's JSON row: the worker's record as the journal keeps it, and its ESTIMATE per GPU now."""
    from pytorch_to_triton import gpu_peaks
    from pytorch_to_triton.roofline_estimate import _lean, error_of, stage_time

    keep = ("ok", "estimated_for", "sizes_label", "dtype", "scaled", "fallback", "library", "method", "error",
            "full_size_findings", "total_launches")
    record = {k: rec.get(k) for k in keep if k in rec}
    record["launches"] = _lean(rec.get("launches"))
    record["reference_full"] = {k: v for k, v in (rec.get("reference_full") or {}).items() if k != "ops"}
    record["reference_ops"] = (rec.get("reference_full") or {}).get("ops")
    out: dict[str, Any] = {"ok": bool(rec.get("ok")), "wall_s": round(wall_s, 1), "record": record}
    if not rec.get("ok"):
        out["error"] = rec.get("error")
        return out
    by_gpu = {g: stage_time(rec, gpu_peaks.lookup(g)) for g in GPUS}
    out.update({"estimate_us": {g: t["est_us"] for g, t in by_gpu.items()},
                "bound": {g: t["bound"] for g, t in by_gpu.items()}, "error": error_of(rec)["text"],
                "estimated_for": rec.get("estimated_for"), "dtype": rec.get("dtype"), "notes": notes})
    return out


def count(only: list[str] | None, budget: float, out: Path, redo: bool, compile_budget: str) -> None:
    """The no-GPU ESTIMATE of every stage, one run_benchmark call each, on this CPU; the JSON after every stage."""
    os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the no-GPU path, even on a machine with one
    from pytorch_to_triton.roofline_estimate import no_gpu_benchmark
    from pytorch_to_triton.service import Service

    data: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    if data.get("method") != "dry run":  # an earlier method's JSON (fitted counts): not comparable, start afresh
        data = {"method": "dry run"}
    data["stages"] = {_folder(k): v for k, v in data.get("stages", {}).items()}
    run = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "loadavg_start": os.getloadavg(),
           "cpus": os.cpu_count(), "budget_s": budget, "compile": compile_budget}
    data.setdefault("runs", []).append(run)
    ws = Path(tempfile.mkdtemp(prefix="p2t_estgal_"))  # the journal and caches go there, not into the checkout
    t_start = time.monotonic()
    svc = Service(ws, device="cpu")
    try:
        for folder, stages in _folders(only):
            shutil.copytree(ROOT / folder, ws / folder, dirs_exist_ok=True)
            for st in stages:
                key, left = f"{folder}/{st}", budget - (time.monotonic() - t_start)
                if key in data["stages"] and not redo:
                    continue
                if left <= 0:
                    run["stopped_by_budget"] = f"{key} and the rest not started"
                    print(f"budget of {budget:.0f} s spent: {run['stopped_by_budget']}", flush=True)
                    return
                t0 = time.monotonic()
                try:
                    ref = ws / folder / "reference.py"
                    base = {"workspace": str(ws), "reference": str(ref), "reference_entry": None,
                            "candidate_entry": None, "dtype": None, "cases": [], "sweep": None, "sizes": None,
                            "compile_budget": compile_budget}
                    rep = no_gpu_benchmark(svc, ref, [ws / folder / st], base, "H100",
                                           min(STAGE_TIMEOUT_S, max(60.0, left)))
                    rec = (rep.model_extra or {}).get("estimate") or [{"ok": False, "error": rep.verdict}]
                    r = _count_row(rec[0], [n for n in rep.notes if not n.startswith("ESTIMATE, not")],
                                   time.monotonic() - t0)
                except Exception as e:  # noqa: BLE001 - a stage that cannot be estimated is a finding, not a stop
                    r = {"ok": False, "error": f"{type(e).__name__}: {str(e)[:500]}",
                         "wall_s": round(time.monotonic() - t0, 1)}
                data["stages"][key] = r
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(data, indent=1, default=str))
                print(f"{key}: " + (f"ESTIMATE {r['estimate_us']['H100']:.4g} µs H100 ({r['bound']['H100']}; "
                                    f"{r['error']}), for {r['estimated_for']}" if r["ok"] else
                                    f"NOT ESTIMATED: {str(r['error'])[:300]}") + f"; {r['wall_s']} s", flush=True)
    finally:
        svc.close()
        run.update(finished=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                   wall_s=round(time.monotonic() - t_start, 1), loadavg_end=os.getloadavg())
        out.write_text(json.dumps(data, indent=1, default=str))
        done = sum(1 for r in data["stages"].values() if r.get("ok"))
        print(f"{done} of {len(data['stages'])} stages estimated; wall {run['wall_s']} s; JSON: {out}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    n = sub.add_parser("count", help="the no-GPU ESTIMATE of every gallery and trial stage, on this CPU")
    n.add_argument("--only", help="comma-separated example or problem names (prefixes)")
    n.add_argument("--budget", type=float, default=4 * 3600.0, help="seconds; no new stage starts once spent")
    n.add_argument("--out", default=str(ESTIMATES))
    n.add_argument("--redo", action="store_true", help="count stages already in the JSON again")
    n.add_argument("--compile", choices=("every", "must"), default="must",
                   help="configs compiled to a cubin for sm_90 (the frontend names every config either way)")
    t = sub.add_parser("time", help="time the estimated stages on this machine's GPU, then compare")
    t.add_argument("--budget", type=float, default=200.0, help="seconds; no folder starts once spent")
    t.add_argument("--only", help="comma-separated folder names or prefixes (default: every estimated folder)")
    t.add_argument("--repeats", type=int, default=1)
    t.add_argument("--out", required=True)
    c = sub.add_parser("compare", help="compare a GPU JSON (from `time`, or earlier medians) with the estimates")
    c.add_argument("gpu_json", nargs="+", help="one or more (several calls' folders are merged)")
    for p in (t, c):
        p.add_argument("--estimates", default=str(ESTIMATES))
        p.add_argument("--json-out", help="write the comparison here")
    a = ap.parse_args()
    if a.cmd == "count":
        count(a.only.split(",") if a.only else None, a.budget, Path(a.out), a.redo, a.compile)
        return 0
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
