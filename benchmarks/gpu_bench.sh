#!/usr/bin/env bash
# GPU timing session: every timing alone on the GPU, one after the other (see benchmarks/RESULTS.md).
# ONLY=softmax,rmsnorm picks examples; PRE="cmd" runs a command first; the *_S variables are the time limits.
set -u
source "$(dirname "$0")/gpu_common.sh"
rm -f .pytorch-to-triton/peaks.json  # measured afresh in this run
if [ -n "${PRE:-}" ]; then timeout ${PRE_S:-80} $PRE 2>&1 | cut -c1-300 | tail -60; stamp pre; fi
timeout ${TIMING_S:-110} python benchmarks/timing_check.py --out "$OUT/timing.json" > "$OUT/timing.log" 2>&1
echo "timing rc=$?"; stamp timing
python - "$OUT/timing.json" <<'PY' 2>&1 | cut -c1-400
import json, sys
d = json.load(open(sys.argv[1]))
print("vadd", {k: v for k, v in d["vadd"].items() if k not in ("environment",)})
for t in d["softmax"]:
    print("softmax", t["impl"], t["median_ms"], t["p20_ms"], t["p80_ms"], t["spread_pct"], t["gbps"], t["pct_peak_bw"], t.get("suspect"))
print("cuda_graph", d["cuda_graph"])
print("sweep", d["sweep"]["rows"])
PY
cp .pytorch-to-triton/peaks.json "$OUT/" 2>/dev/null; cat .pytorch-to-triton/peaks.json 2>/dev/null | head -c 600; echo
timeout ${BENCH_S:-900} python benchmarks/run_examples.py --no-validate --repeats 2 --only ${ONLY:-softmax,matmul,flash_attention,layernorm,rmsnorm,cross_entropy,vector_add,logsumexp,prefix_scan} \
    --out "$OUT/examples_bench.json" > "$OUT/examples_bench.log" 2>&1; echo "bench rc=$?"; stamp examples_bench
python benchmarks/show_bench.py "$OUT/examples_bench.json" 2>&1 | cut -c1-300
