"""The warm validate in the worker subprocess vs the same validate in-process (issue 28: 132.5 vs 64.9 ms on the H200).

    PYTHONPATH=$PWD/server python3 benchmarks/explore/worker_gap.py [--rounds 3] [--calls 8] [--task tiny|vadd]

Each round runs, one after the other (interleaved, so that load from other jobs falls on both alike):
  inproc      validate_candidate in a process set up as the worker sets itself up (runtime.setup, poison, the
              prewarm, PatchWatch, gc.freeze), emit a no-op (latency.py's bare layer)
  inproc_emit the same, emit writing every protocol line to a pipe a thread drains (what the worker sends)
  pool        WorkerPool.call("validate") to a real worker subprocess (sandbox as the server runs it)
Per call: wall seconds and the main thread's CPU seconds (time.thread_time in-process, /proc/PID/schedstat for the
worker), so the comparison holds on a loaded machine. `--task tiny` (default) validates vadd_tiny_reference.py, whose
cases the interpreter runs in milliseconds: on a CPU-only machine the harness, not the interpreted kernel, dominates.
`--profile DIR`: a cProfile of each warm call, in-process (inproc-N.prof) and in the worker (P2T_WORKER_PROFILE;
the worker then runs with P2T_SANDBOX=0, else the ruleset refuses writes to DIR).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "server"))
REFS = {"tiny": "benchmarks/tasks/vadd_tiny_reference.py", "vadd": "benchmarks/tasks/vadd_reference.py"}
CAND = "benchmarks/tasks/vadd_stage1.py"


def _args(task: str) -> dict[str, Any]:
    return {"workspace": str(ROOT), "reference": str(ROOT / REFS[task]), "candidate": str(ROOT / CAND),
            "candidate_display": CAND, "trials": 3, "seed": 0, "tolerances": {}, "cases": []}


def _stats(xs: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(xs), 4), "min": round(min(xs), 4), "max": round(max(xs), 4)}


def inproc(task: str, calls: int, emit_pipe: bool, profile: str | None) -> dict[str, Any]:
    """validate_candidate in this process, set up as worker/__main__.py sets the worker up."""
    from pytorch_to_triton.protocol import write_message
    from pytorch_to_triton.worker import prewarm
    from pytorch_to_triton.worker.device.runtime import setup
    from pytorch_to_triton.worker.validation import poison
    from pytorch_to_triton.worker.validation.guards import PatchWatch
    from pytorch_to_triton.worker.validation.run_validation import validate_candidate

    rt = setup()
    poison.install()
    prewarm.startup(rt.device)
    patches = PatchWatch()
    gc.collect()
    gc.freeze()
    emit: Any = lambda *a, **k: None  # noqa: E731
    if emit_pipe:
        r, w = os.pipe()
        threading.Thread(target=lambda: [None for _ in iter(lambda: os.read(r, 1 << 16), b"")], daemon=True).start()

        def emit(kind: str, **fields: Any) -> None:
            write_message(w, {"id": 1, "type": kind, **fields})
    walls, cpus, inner = [], [], []
    for i in range(calls + 1):
        prof = None
        if profile and i:
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
        t0, c0 = time.perf_counter(), time.thread_time()
        rep = validate_candidate(_args(task), rt, emit, patches)
        wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
        if prof is not None:
            prof.disable()
            prof.dump_stats(os.path.join(profile, f"inproc-{'emit-' if emit_pipe else ''}{i}.prof"))
        assert rep["ok"], rep["findings"]
        gc.collect()  # the worker's memory.release after each call (outside time_s)
        if i:
            walls.append(wall)
            cpus.append(cpu)
            inner.append(rep["time_s"])
    return {"wall": _stats(walls), "cpu": _stats(cpus), "time_s": _stats(inner), "cases": len(rep["cases"])}


def _cpu_ns(pid: int) -> int:
    with open(f"/proc/{pid}/schedstat") as f:  # the main thread: ns on CPU, waiting, timeslices
        return int(f.read().split()[0])


def pool(task: str, calls: int, profile: str | None) -> dict[str, Any]:
    """WorkerPool.call to a real worker subprocess."""
    if profile:
        os.environ["P2T_WORKER_PROFILE"] = profile
        os.environ["P2T_SANDBOX"] = "0"
    from pytorch_to_triton.worker_client import Limits, WorkerPool

    wp = WorkerPool(ROOT, ROOT / ".pytorch-to-triton", limits=Limits(spare=False))
    try:
        wp.call("validate", _args(task), timeout_s=600)  # compile / load
        slot = wp.slots[0]
        walls, cpus, inner = [], [], []
        for _ in range(calls):
            pid = slot.proc.pid
            t0, c0 = time.perf_counter(), _cpu_ns(pid)
            res = wp.call("validate", _args(task), timeout_s=600)
            wall, cpu = time.perf_counter() - t0, (_cpu_ns(pid) - c0) / 1e9
            assert res["ok"], res["findings"]
            walls.append(wall)
            cpus.append(cpu)
            inner.append(res["time_s"])
        rt = res.get("runtime") or {}
        return {"wall": _stats(walls), "cpu_incl_release": _stats(cpus), "time_s": _stats(inner),
                "cases": len(res["cases"]), "sandbox": rt.get("sandbox")}
    finally:
        wp.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--task", choices=list(REFS), default="tiny")
    ap.add_argument("--profile", default=None)
    ap.add_argument("--one", choices=["inproc", "inproc_emit", "pool"], default=None)
    a = ap.parse_args()
    if a.one:
        res = pool(a.task, a.calls, a.profile) if a.one == "pool" else inproc(a.task, a.calls, a.one == "inproc_emit",
                                                                           a.profile)
        print(json.dumps(res))
        return 0
    out: dict[str, list[Any]] = {"inproc": [], "inproc_emit": [], "pool": []}
    for r in range(a.rounds):
        for mode in out:
            cmd = [sys.executable, __file__, "--one", mode, "--calls", str(a.calls), "--task", a.task]
            if a.profile:
                cmd += ["--profile", a.profile]
            p = subprocess.run(cmd, capture_output=True, text=True, cwd=str(ROOT), check=False)
            line = [x for x in p.stdout.splitlines() if x.startswith("{")]
            res = json.loads(line[-1]) if line else {"error": p.stderr[-1500:]}
            out[mode].append(res)
            print(f"round {r} {mode}: {json.dumps(res)}", flush=True)
    print("\nmedian over rounds of the per-call medians (ms); [min..max of the round medians]")
    for mode, rows in out.items():
        ok = [x for x in rows if "error" not in x]
        for key in ("wall", "cpu", "cpu_incl_release", "time_s"):
            vals = [x[key]["median"] for x in ok if key in x]
            if vals:
                print(f"  {mode:<12} {key:<17} {statistics.median(vals) * 1e3:8.1f}  "
                      f"[{min(vals) * 1e3:.1f}..{max(vals) * 1e3:.1f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
