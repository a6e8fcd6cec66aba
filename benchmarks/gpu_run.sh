#!/usr/bin/env bash
# One GPU session: GPU tests, latency, timing checks, example gallery. Outputs under $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
python -c "import torch, triton; print(torch.__version__, triton.__version__)" >> "$OUT/gpu.txt"
timeout 150 python -m pytest -q -ra -p no:cacheprovider tests/test_gpu.py tests/test_worker.py tests/test_mcp.py > "$OUT/pytest_gpu.txt" 2>&1; echo "pytest rc=$?" >> "$OUT/pytest_gpu.txt"
timeout 90 python benchmarks/latency.py --calls 10 --out "$OUT/latency.json" > "$OUT/latency.log" 2>&1
timeout 120 python benchmarks/timing_check.py --out "$OUT/timing.json" > "$OUT/timing.log" 2>&1
timeout 200 python benchmarks/run_examples.py --out "$OUT/examples.json" > "$OUT/examples.log" 2>&1
tail -3 "$OUT/pytest_gpu.txt"; cat "$OUT/latency.json" 2>/dev/null | head -8; tail -20 "$OUT/timing.log"; tail -30 "$OUT/examples.log"
