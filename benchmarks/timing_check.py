"""Timing honesty on a GPU (issue 5): run_benchmark's median of a vector add (2^26 fp32) against an independent
CUDA-event loop, run to run, and the peaks the tool measured on this GPU (copy bandwidth, bf16 matmul rate).

    python benchmarks/timing_check.py --out timing.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from pytorch_to_triton.service import Service  # noqa: E402

VADD = {"reference": "benchmarks/tasks/vadd_reference.py", "candidates": ["benchmarks/tasks/vadd_stage1.py"],
        "cases": [{"name": "n=2^26", "shape": [1 << 26]}], "compile": "none"}


def event_loop_median(n: int, iters: int = 200) -> float:
    """Independent timer: score_trial.py's CUDA events around each call, L2 flushed by a 256 MB write before each."""
    import torch
    from score_trial import _load, _time

    mod = _load(ROOT / "benchmarks/tasks/vadd_stage1.py", "vadd")
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    return _time(mod.reference, [x, y], runs=iters, warmup=20)["median_ms"]


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
    finally:
        svc.close()
    text = json.dumps(res, indent=2, default=str)
    v = res["vadd"]
    print(f"vadd 2^26 fp32: tool {v['tool_median_ms_run1']:.4f} / {v['tool_median_ms_run2']:.4f} ms, events "
          f"{v['event_loop_median_ms']:.4f} ms: tool vs events {v['tool_vs_events_pct']:+.2f} %, run to run "
          f"{v['run1_vs_run2_pct']:.2f} %\npeaks: {json.dumps(v['peaks'])[:600]}")
    if out:
        Path(out).write_text(text)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    main(ap.parse_args().out)
