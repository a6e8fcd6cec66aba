"""Issue 5's acceptance checks on a GPU: agreement with an independent CUDA-event loop, run-to-run
repeatability, and the softmax ranking (torch.softmax vs torch.compile vs a one-row Triton kernel).

    python benchmarks/timing_check.py --out timing.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "server"))

from pytorch_to_triton.service import Service  # noqa: E402

VADD = {"reference": "benchmarks/tasks/vadd_reference.py", "candidates": ["benchmarks/tasks/vadd_stage1.py"],
        "cases": [{"name": "n=2^26", "shape": [1 << 26]}], "compile": "none"}


def event_loop_median(n: int, iters: int = 200) -> float:
    """Independent timer: CUDA events around each call, L2 flushed by a 256 MiB write before each."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("vadd", ROOT / "benchmarks/tasks/vadd_stage1.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for _ in range(20):
        mod.reference(x, y)
    times = []
    for _ in range(iters):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        mod.reference(x, y)
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def main(out: str | None) -> None:
    svc = Service(ROOT)
    res: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
    try:
        a = svc.benchmark(**VADD)
        b = svc.benchmark(**VADD)
        med_a = next(t.median_ms for t in a.timings if t.impl.endswith("vadd_stage1.py"))
        med_b = next(t.median_ms for t in b.timings if t.impl.endswith("vadd_stage1.py"))
        ev = event_loop_median(1 << 26)
        res["vadd"] = {"tool_median_ms_run1": med_a, "tool_median_ms_run2": med_b, "event_loop_median_ms": ev,
                       "tool_vs_events_pct": round(100 * (med_a - ev) / ev, 2),
                       "run1_vs_run2_pct": round(100 * abs(med_a - med_b) / med_a, 2),
                       "environment": a.environment, "peaks": a.peaks}
        sm = svc.benchmark(reference="benchmarks/tasks/softmax_reference.py",
                           candidates=["benchmarks/tasks/softmax_torch.py", "benchmarks/tasks/softmax_row.py"])
        res["softmax"] = [t.model_dump(mode="json", include={"impl", "median_ms", "p20_ms", "p80_ms", "spread_pct",
                                                             "gbps", "pct_peak_bw", "speedup_vs_eager",
                                                             "speedup_vs_compile", "suspect", "error"})
                          for t in sm.timings]
        res["softmax_summary"] = sm.summary
        # A size sweep (table + PNG) and CUDA-graph mode for a launch-bound size.
        sw = svc.benchmark(reference="benchmarks/tasks/softmax_reference.py",
                           candidates=["benchmarks/tasks/softmax_row.py"], compile="none", repeats=1,
                           sweep={"param": "N", "values": [256, 1024, 4096, 16384], "shape": [4096, "N"]})
        res["sweep"] = {"plot": sw.plot, "rows": [(t.case, t.impl, t.median_ms, t.gbps) for t in sw.timings]}
        tiny = {**VADD, "cases": [{"name": "n=4096", "shape": [4096]}], "repeats": 1}
        plain, graph = svc.benchmark(**tiny), svc.benchmark(**tiny, cuda_graph=True)
        res["cuda_graph"] = {"plain": [(t.impl, t.median_ms) for t in plain.timings],
                             "graph": [(t.impl, t.median_ms) for t in graph.timings]}
    finally:
        svc.close()
    text = json.dumps(res, indent=2, default=str)
    print(text)
    if out:
        Path(out).write_text(text)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    main(ap.parse_args().out)
