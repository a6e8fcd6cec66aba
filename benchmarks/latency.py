"""Issue 3's latency targets through a real stdio MCP client: cold first call, then warm medians.

    python benchmarks/latency.py [--calls 10] [--out results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
ARGS = {"reference": "benchmarks/tasks/vadd_reference.py", "candidates": ["benchmarks/tasks/vadd_stage1.py"]}


async def main(calls: int) -> dict:
    shutil.rmtree(ROOT / ".pytorch-to-triton" / "triton_cache", ignore_errors=True)  # cold Triton cache
    env = dict(os.environ)
    params = StdioServerParameters(command=sys.executable, args=["-m", "pytorch_to_triton", "serve", "--workspace",
                                                                str(ROOT)], env=env, cwd=str(ROOT))
    t_start = time.perf_counter()
    async with Client(params, read_timeout_seconds=600) as client:
        t_conn = time.perf_counter()
        r = await client.call_tool("run_validation", ARGS)
        first = time.perf_counter() - t_conn
        assert r.structured_content and r.structured_content["ok"], r.content
        n_cases = len(r.structured_content["candidates"][0]["cases"])
        warm = []
        for _ in range(calls):
            t0 = time.perf_counter()
            r = await client.call_tool("run_validation", ARGS)
            warm.append(time.perf_counter() - t0)
            assert r.structured_content["ok"]
        rt = r.structured_content["runtime"]
    return {"first_call_s": round(first, 3), "server_start_s": round(t_conn - t_start, 3),
            "warm_median_s": round(statistics.median(warm), 4), "warm_min_s": round(min(warm), 4),
            "warm_max_s": round(max(warm), 4), "calls": calls, "case_runs_per_call": n_cases, "runtime": rt,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--out")
    a = ap.parse_args()
    res = anyio.run(main, a.calls)
    print(json.dumps(res, indent=2))
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=2))
