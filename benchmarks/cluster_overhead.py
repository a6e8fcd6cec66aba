"""What the Dask engine adds per call (issue 27), measured on any machine; a CPU is enough (no kernel is timed).

    PYTHONPATH=$PWD/.site:$PWD/server python3 benchmarks/cluster_overhead.py [--calls 20] [--tasks 1000]

1. the scheduler's own cost: a no-op task with resources GPU=1 on a one-worker LocalCluster, one after another
   (round trip), and --tasks of them submitted at once (tasks per second through one worker);
2. file shipping: shipping.pack + materialize of one KernelBench-corpus unit (reference + candidate + sidecar), and
   the same bundle carried through a Dask task (beside the no-op);
3. a warm run_validation of the tiny add task through the local worker and through --cluster (one worker): the
   difference is the engine's overhead per call, next to what the result's `cluster.overhead_s` says.
Writes cluster_overhead.json under $OUT (default /tmp/out) and prints it.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))


def _noop(x: Any = None) -> int:
    return 0


def _materialize(files: dict[str, bytes], digest: str, base: str) -> int:
    from pytorch_to_triton.cluster import shipping

    shipping.materialize(files, digest, Path(base))
    return len(files)


def _ms(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {"median_ms": round(statistics.median(xs) * 1e3, 3), "p20_ms": round(xs[len(xs) // 5] * 1e3, 3),
            "p80_ms": round(xs[len(xs) * 4 // 5] * 1e3, 3), "n": len(xs)}


def scheduler_and_shipping(n: int, n_tasks: int, scratch: Path) -> dict[str, Any]:
    """Parts 1 and 2 on a one-worker LocalCluster."""
    import distributed

    from pytorch_to_triton.cluster import shipping

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
        futs = [client.submit(_noop, i, pure=False, resources={"GPU": 1}) for i in range(n_tasks)]
        client.gather(futs)
        dt = time.perf_counter() - t0
        out["noop_tasks_at_once"] = {"tasks": n_tasks, "wall_s": round(dt, 3), "per_task_ms": round(dt / n_tasks * 1e3, 3)}

        task = ROOT / "tests" / "kernelbench_corpus" / "gelu"
        cand = sorted(p for p in task.glob("*.py") if p.name != "reference.py")[0]
        args = {"workspace": str(ROOT), "reference": str(task / "reference.py"), "candidate": str(cand)}
        packs, mats = [], []
        for i in range(n * 10):
            t0 = time.perf_counter()
            b = shipping.pack(args, ROOT)
            packs.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            shipping.materialize(b.files, b.digest if i else b.digest, scratch)
            mats.append(time.perf_counter() - t0)
        out["bundle"] = {"files": sorted(b.files), "bytes": b.size}
        out["pack"] = _ms(packs)
        out["materialize_existing"] = _ms(mats[1:])
        carried = []
        for i in range(n * 10):
            t0 = time.perf_counter()
            client.submit(_materialize, b.files, f"x{i}", str(scratch), pure=False, resources={"GPU": 1}).result()
            carried.append(time.perf_counter() - t0)
        out["bundle_task_round_trip_new_folder"] = _ms(carried)
    return out


def validate_local_vs_cluster(n: int, ws: Path) -> dict[str, Any]:
    """Part 3: the same warm run_validation through the local worker and through a one-worker cluster."""
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


def main() -> int:
    """Run the three parts and write the JSON."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20)
    ap.add_argument("--tasks", type=int, default=1000)
    args = ap.parse_args()
    out_dir = Path(os.environ.get("OUT") or "/tmp/out")
    out_dir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("P2T_SPARE_WORKER", "0")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["P2T_CLUSTER_SCRATCH"] = str(Path(tmp) / "scratch")
        res = {"when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "cpus": os.cpu_count(),
               **scheduler_and_shipping(args.calls, args.tasks, Path(tmp) / "ship"),
               "validate": validate_local_vs_cluster(args.calls, Path(tmp) / "ws")}
    import distributed

    res["distributed"] = distributed.__version__
    (out_dir / "cluster_overhead.json").write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
