"""Print one line per timing of a run_examples.py results JSON.

    python benchmarks/show_bench.py results.json

Columns: example, case, implementation, median, min, host ms per call, GB/s, % of copy peak, speedup vs
torch.compile, error, first suspect flag.
"""

from __future__ import annotations

import json
import sys


def main(path: str) -> None:
    data = json.load(open(path))
    for name, entry in data["examples"].items():
        bench = entry.get("benchmark")
        if not bench:
            print(name, entry.get("benchmark_error", "")[:250])
            continue
        for t in bench["timings"]:
            print(name, t.get("case"), t["impl"].split("/")[-1], t.get("median_ms"), t.get("min_ms"),
                  t.get("host_ms_per_call"), t.get("gbps"), t.get("pct_peak_bw"), t.get("speedup_vs_compile"),
                  (t.get("error") or "")[:60], (t.get("suspect") or [""])[0][:60])


if __name__ == "__main__":
    main(sys.argv[1])
