#!/usr/bin/env bash
# One GPU session (the device budget allows ~one 9-minute run): correctness work first, in parallel
# (no timing is taken while it runs), then every timing alone on the GPU. Each part has its own limit and
# writes under $OUT as it goes, so a part that runs out of time still leaves what it measured.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$(date +%s)
stamp() { echo "$(( $(date +%s) - T0 ))s $*" >> "$OUT/phases.txt"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv
  python -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, triton.__version__)"
} > "$OUT/gpu.txt" 2>&1
stamp start
# --- phase A: correctness on the GPU (parallel; nothing here is timed) ---
( timeout 120 python benchmarks/corpus_dump.py --out "$OUT/corpus.json" > "$OUT/corpus.log" 2>&1 ) &
( timeout 120 python -m pytest -q -ra -p no:cacheprovider --timeout 120 tests/test_gpu.py \
    > "$OUT/pytest_gpu.txt" 2>&1; echo "pytest rc=$?" >> "$OUT/pytest_gpu.txt" ) &
( timeout 120 python benchmarks/fault_suite.py --out "$OUT/faults" > "$OUT/faults.log" 2>&1; echo "rc=$?" >> "$OUT/faults.log" ) &
( timeout 120 python benchmarks/run_examples.py --no-bench --out "$OUT/examples_validation.json" \
    > "$OUT/examples_validation.log" 2>&1; echo "rc=$?" >> "$OUT/examples_validation.log" ) &
wait; stamp phaseA
# --- phase B: timings, one at a time ---
timeout 45 python benchmarks/latency.py --calls 10 --out "$OUT/latency.json" > "$OUT/latency.log" 2>&1; stamp latency
timeout 110 python benchmarks/timing_check.py --out "$OUT/timing.json" > "$OUT/timing.log" 2>&1; stamp timing
cp .pytorch-to-triton/plots/*.png "$OUT/" 2>/dev/null
timeout 200 python benchmarks/run_examples.py --no-validate --repeats 2 \
    --only softmax,matmul,flash_attention,layernorm,rmsnorm,cross_entropy,vector_add,logsumexp,prefix_scan \
    --out "$OUT/examples_bench.json" > "$OUT/examples_bench.log" 2>&1; stamp examples_bench
cp .pytorch-to-triton/peaks.json "$OUT/" 2>/dev/null
tail -4 "$OUT/pytest_gpu.txt"; tail -3 "$OUT/faults.log"; cat "$OUT/phases.txt"
head -c 1500 "$OUT/latency.json"; tail -c 2500 "$OUT/timing.log"; tail -c 3000 "$OUT/examples_bench.log"
