"""The GPU peaks run_benchmark measures once per GPU (worker/benchmark/peaks.measure_peaks), kept by the host process beside the
worker's caches: `<state dir>/peaks.json`, {"<gpu name>|<cuda version>": {"copy_gbps": ..., ...}}.

The worker never writes it: its sandbox makes the workspace read-only (on the H200 run_benchmark failed writing
peaks.<pid>.tmp there). Each benchmark request carries the peaks already known (`peaks_known`); a result that measured
new ones returns them (`peaks_measured`) and the host writes them (worker_client.WorkerSlot.call). Runs in the server
or a Dask worker: no torch. The worker runs user code, so what it returns is checked before it is written.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from .workspace import atomic_write

FILE = "peaks.json"
NUMBERS = ("copy_gbps", "read_gbps", "bf16_matmul_tflops")  # what every entry holds (worker/benchmark/peaks.measure_peaks)
MAX_ENTRIES = 64  # GPU models x CUDA versions one state directory sees; more is not a cache of peaks


def known(state_dir: Path) -> dict[str, Any]:
    """The peaks measured so far on this host ({} when none or unreadable)."""
    try:
        data = json.loads((state_dir / FILE).read_text())
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if _valid(k, v)} if isinstance(data, dict) else {}


def _valid(key: Any, entry: Any) -> bool:
    if not isinstance(key, str) or len(key) > 200 or not isinstance(entry, dict) or len(json.dumps(entry)) > 4096:
        return False
    vals = [entry.get(k) for k in NUMBERS]
    return all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in vals)


def remember(state_dir: Path, measured: Any) -> list[str]:
    """Add what a benchmark measured ({key: peaks}) to the host's file; returns the keys written (invalid entries,
    e.g. from a candidate that forged the worker's answer, are dropped)."""
    if not isinstance(measured, dict):
        return []
    new = {k: v for k, v in measured.items() if _valid(k, v)}
    if not new:
        return []
    data = {**known(state_dir), **new}
    if len(data) > MAX_ENTRIES:
        return []
    atomic_write(state_dir / FILE, json.dumps(data, indent=2))
    return sorted(new)
