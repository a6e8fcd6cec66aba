"""The Dask engine behind `--cluster` (issue 27): the same verdicts and timings through it, and what it adds per call.

    python3 benchmarks/gpu_cluster.py [--part all|local|cluster|cli] [--problems quick|all|gelu,bmm]   # a GPU machine
    python3 benchmarks/gpu_cluster.py --part overhead [--calls 20] [--tasks 1000]                     # any machine

local, cluster: the KernelBench-form corpus (quick: its 10 quickest problems) in one run_suite on the fast path, then
through `--cluster local`, both cold, compared per candidate (verdict, checks, KernelBench's criterion, median ms).
cli: `dask scheduler` and a `dask worker --resources GPU=1` as processes, a client with CUDA hidden running `validate`
and `bench` with --cluster. overhead: no-op tasks on a one-worker LocalCluster (round trip, tasks per second), then a
warm validation locally and through the cluster. JSON under $OUT: gpu_cluster.json (runs add to it),
cluster_overhead.json. dask and distributed go into .whl/ first: ../shared/tools/gpu-wheels dask==2026.8.0
distributed==2026.8.0 tornado zict tblib locket partd
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
CORPUS = "tests/kernelbench_corpus"
# The 10 quickest problems of the 2026-12-03 18:14 H200 run (benchmarks/results/suite_2026-12-03_1814.json), 5-7 s each.
QUICK = ["maxpool2d", "softplus", "avgpool2d", "hardtanh", "mean_dim2", "min_dim1", "rmsnorm_dim1", "channel_affine",
         "swish", "sum_dim1"]


def _suite(cluster: str | None, name: str, problems: list[str] | None, out: Path) -> dict[str, Any]:
    from pytorch_to_triton.service import Service
    from pytorch_to_triton.suite import run_suite

    t0 = time.monotonic()
    svc = Service(ROOT, cluster=cluster)
    up = time.monotonic() - t0
    last = [0.0]

    def on_event(msg: str, done: float | None, total: float | None) -> None:
        now = time.monotonic()
        if " ETA " in msg or now - last[0] > 20:
            last[0] = now
            print(f"  [{name} {now - t0:6.1f}s] {msg[:160]}", file=sys.stderr, flush=True)

    try:
        t1 = time.monotonic()
        rep = run_suite(svc, directory=CORPUS, name=name, problems=problems, redo=True, trials=1, repeats=2,
                        timeout_s=300, on_event=on_event)
        wall = time.monotonic() - t1
    finally:
        svc.close()
    (out / f"{name}.md").write_text(rep.markdown)
    return {"startup_s": round(up, 2), "wall_s": round(wall, 2), "counts": rep.counts, "spread": rep.spread,
            "rows": [r.model_dump(mode="json") for r in rep.rows]}


def compare(local: dict[str, Any], cluster: dict[str, Any]) -> dict[str, Any]:
    """Same verdicts? Timings within spread? The engine's cost per candidate."""
    a = {(r["problem"], r["candidate"]): r for r in local["rows"]}
    b = {(r["problem"], r["candidate"]): r for r in cluster["rows"]}
    differ, ratios, unit_diff = [], [], []
    for k in sorted(a):
        ra, rb = a[k], b.get(k)
        if rb is None:
            differ.append({"unit": "/".join(k), "why": "missing in the cluster run"})
            continue
        if (ra["verdict"], ra["failing_checks"], ra["kernelbench"]) != (rb["verdict"], rb["failing_checks"],
                                                                         rb["kernelbench"]):
            differ.append({"unit": "/".join(k), "local": [ra["verdict"], ra["failing_checks"], ra["kernelbench"]],
                           "cluster": [rb["verdict"], rb["failing_checks"], rb["kernelbench"]]})
        if ra.get("median_ms") and rb.get("median_ms"):
            ratios.append({"unit": "/".join(k), "local_ms": ra["median_ms"], "cluster_ms": rb["median_ms"],
                           "ratio": round(rb["median_ms"] / ra["median_ms"], 4)})
        if ra.get("time_s") is not None and rb.get("time_s") is not None:
            unit_diff.append(rb["time_s"] - ra["time_s"])
    rs = [r["ratio"] for r in ratios]
    return {"units": len(a), "verdicts_differ": differ, "timings": ratios,
            "ratio_median": statistics.median(rs) if rs else None, "ratio_min": min(rs) if rs else None,
            "ratio_max": max(rs) if rs else None, "within_5pct": sum(abs(r - 1) <= 0.05 for r in rs),
            "unit_time_diff_s_median": round(statistics.median(unit_diff), 3) if unit_diff else None,
            "wall_diff_per_unit_s": round((cluster["wall_s"] - local["wall_s"]) / max(1, len(a)), 3)}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli_part(problem: str) -> dict[str, Any]:
    """A scheduler and one GPU worker from the command line; a client with CUDA hidden validates and benchmarks."""
    port = _port()
    address = f"tcp://127.0.0.1:{port}"
    scratch = Path(tempfile.mkdtemp(prefix="p2t-cluster-"))
    base = {**os.environ, "P2T_CLUSTER_SCRATCH": str(scratch)}
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", str(port), "--no-dashboard"], env=base, stderr=subprocess.DEVNULL,
                              start_new_session=True)]
    procs.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--resources", "GPU=1",
                                   "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"],
                                  env={**base, "CUDA_VISIBLE_DEVICES": "0"}, stderr=subprocess.DEVNULL,
                                  start_new_session=True))
    client_env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    task = f"{CORPUS}/{problem}"
    out: dict[str, Any] = {"address": address, "problem": problem}
    try:
        for tool, extra in (("validate", ["--trials", "1"]), ("validate", ["--trials", "1"]),
                            ("bench", ["--repeats", "2"])):
            t0 = time.monotonic()
            res = subprocess.run([sys.executable, "-m", "pytorch_to_triton", tool, f"{task}/reference.py",
                                  f"{task}/good.py", "--cluster", address, "--json", *extra], env=client_env,
                                 capture_output=True, text=True, timeout=240, cwd=ROOT)
            wall = round(time.monotonic() - t0, 2)
            entry: dict[str, Any] = {"rc": res.returncode, "wall_s": wall}
            try:
                rep = json.loads(res.stdout)
                entry.update(ok=rep.get("ok"), device=rep.get("device"), verdict=rep.get("verdict"))
                if tool == "validate":
                    entry.update(runtime={k: rep["runtime"].get(k) for k in ("gpu", "host", "dask_worker",
                                                                             "worker_device")},
                                 cluster=rep["candidates"][0].get("cluster"))
                else:
                    entry["timings"] = [{k: t.get(k) for k in ("impl", "case", "median_ms", "speedup_vs_compile")}
                                        for t in rep.get("timings", [])]
                    entry["environment_gpu"] = (rep.get("environment") or {}).get("gpu")
            except (json.JSONDecodeError, KeyError, IndexError, TypeError):
                entry["stderr"] = res.stderr[-2000:]
            out.setdefault(tool, []).append(entry)
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, 9)
            except ProcessLookupError:
                pass
    return out


def _noop(x: Any = None) -> int:
    return 0


def _ms(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {"median_ms": round(statistics.median(xs) * 1e3, 3), "p20_ms": round(xs[len(xs) // 5] * 1e3, 3),
            "p80_ms": round(xs[len(xs) * 4 // 5] * 1e3, 3), "n": len(xs)}


def scheduler(n: int, n_tasks: int) -> dict[str, Any]:
    """No-op tasks with resources GPU=1 on a one-worker LocalCluster: one after another, then n_tasks at once."""
    import distributed

    out: dict[str, Any] = {}
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"GPU": 1},
                                  host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR) as cl, \
            distributed.Client(cl, set_as_default=False) as client:
        client.submit(_noop, pure=False).result()
        rt = []
        for _ in range(n * 10):
            t0 = time.perf_counter()
            client.submit(_noop, pure=False, resources={"GPU": 1}).result()
            rt.append(time.perf_counter() - t0)
        out["noop_task_round_trip"] = _ms(rt)
        t0 = time.perf_counter()
        client.gather([client.submit(_noop, i, pure=False, resources={"GPU": 1}) for i in range(n_tasks)])
        dt = time.perf_counter() - t0
        out["noop_tasks_at_once"] = {"tasks": n_tasks, "wall_s": round(dt, 3), "per_task_ms": round(dt / n_tasks * 1e3, 3)}
    return out


def validate_local_vs_cluster(n: int, ws: Path) -> dict[str, Any]:
    """The same warm run_validation through the local worker and through a one-worker cluster."""
    import distributed

    from pytorch_to_triton.service import Service

    (ws / "task").mkdir(parents=True, exist_ok=True)
    for f in ("reference.py", "good.py"):
        shutil.copy(ROOT / "tests" / "cluster_fixtures" / f, ws / "task" / f)
    kw = {"reference": "task/reference.py", "candidates": ["task/good.py"], "trials": 1}
    out: dict[str, Any] = {}
    svc = Service(ws)
    try:
        svc.validate(**kw)
        times = []
        for _ in range(n):
            t0 = time.perf_counter()
            svc.validate(**kw)
            times.append(time.perf_counter() - t0)
        out["local"] = _ms(times)
    finally:
        svc.close()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, resources={"GPU": 1},
                                  host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR) as cl:
        svc = Service(ws, cluster=cl.scheduler_address)
        try:
            svc.validate(**kw)
            times, overheads, ships = [], [], []
            for _ in range(n):
                t0 = time.perf_counter()
                rep = svc.validate(**kw)
                times.append(time.perf_counter() - t0)
                c = rep.candidates[0].model_extra["cluster"]
                overheads.append(c["overhead_s"])
                ships.append(c["ship_s"])
            out["cluster"] = _ms(times)
            out["cluster_overhead_s_field"] = _ms(overheads)
            out["remote_materialize"] = _ms(ships)
            out["bundle_bytes"] = c["bundle_bytes"]
        finally:
            svc.close()
    out["engine_overhead_ms"] = round(out["cluster"]["median_ms"] - out["local"]["median_ms"], 3)
    return out


def overhead(calls: int, tasks: int, out_dir: Path) -> None:
    """--part overhead: the scheduler's own cost and a warm validation's, local against a one-worker cluster."""
    import distributed

    os.environ.setdefault("P2T_SPARE_WORKER", "0")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["P2T_CLUSTER_SCRATCH"] = str(Path(tmp) / "scratch")
        res = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(),
               "distributed": distributed.__version__, **scheduler(calls, tasks),
               "validate": validate_local_vs_cluster(calls, Path(tmp) / "ws")}
    (out_dir / "cluster_overhead.json").write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=2))


def main() -> int:
    """Run the parts asked for and write gpu_cluster.json."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", default="quick", help="quick (10 quickest), all, or a comma list")
    ap.add_argument("--part", default="all", choices=["all", "local", "cluster", "cli", "overhead"])
    ap.add_argument("--calls", type=int, default=20, help="overhead: warm calls (no-op tasks: 10x this)")
    ap.add_argument("--tasks", type=int, default=1000, help="overhead: no-op tasks submitted at once")
    args = ap.parse_args()
    out = Path(os.environ.get("OUT") or "/tmp/out")
    out.mkdir(parents=True, exist_ok=True)
    if args.part == "overhead":
        overhead(args.calls, args.tasks, out)
        return 0
    problems = None if args.problems == "all" else QUICK if args.problems == "quick" else args.problems.split(",")
    path = out / "gpu_cluster.json"
    res: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    res.update(when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), problems=problems or "all")
    t0 = time.monotonic()
    if args.part in ("all", "local"):
        res["local"] = _suite(None, "cluster-cmp-local", problems, out)
        print(f"local: {res['local']['wall_s']} s, {res['local']['counts']}", flush=True)
    if args.part in ("all", "cluster"):
        res["cluster"] = _suite("local", "cluster-cmp-cluster", problems, out)
        print(f"cluster local: {res['cluster']['wall_s']} s (+{res['cluster']['startup_s']} s start), "
              f"{res['cluster']['counts']}; {res['cluster']['spread'].get('description')}", flush=True)
    if "local" in res and "cluster" in res:
        res["compare"] = compare(res["local"], res["cluster"])
        c = res["compare"]
        print(f"compare: {c['units']} units, verdicts differ {len(c['verdicts_differ'])}, timing ratio cluster/local "
              f"median {c['ratio_median']} [{c['ratio_min']}, {c['ratio_max']}], within 5 % {c['within_5pct']} of "
              f"{len(c['timings'])}; unit time +{c['unit_time_diff_s_median']} s (median), wall per unit "
              f"{c['wall_diff_per_unit_s']:+} s", flush=True)
        for d in c["verdicts_differ"]:
            print("  differs:", d, flush=True)
    if args.part in ("all", "cli"):
        res["cli"] = cli_part((problems or QUICK)[0])
        for tool in ("validate", "bench"):
            for e in res["cli"].get(tool, []):
                print(f"cli {tool}: rc {e['rc']} ok {e.get('ok')} on {e.get('device')} in {e['wall_s']} s "
                      f"{e.get('timings') or e.get('runtime') or e.get('stderr', '')}", flush=True)
    res["total_s"] = round(time.monotonic() - t0, 1)
    path.write_text(json.dumps(res, indent=2, default=str))
    print(f"total {res['total_s']} s; wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
