# PART=bench: sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# Every timing alone on the GPU, one after the other (RESULTS.md, issues 5 and 13;
# ~10 minutes with its defaults: ONLY=softmax,rmsnorm picks examples, the *_S variables are the limits).
rm -f .pytorch-to-triton/peaks.json  # measured afresh in this run
run timing_check "${TIMING_S:-110}" python3 benchmarks/timing_check.py --out "$OUT/x/timing.json"
python3 - "$OUT/x/timing.json" <<'PY' 2>&1 | cut -c1-400
import json, sys
d = json.load(open(sys.argv[1]))
print("vadd", {k: v for k, v in d["vadd"].items() if k not in ("environment",)})
for t in d["softmax"]:
    print("softmax", t["impl"], t["median_ms"], t["p20_ms"], t["p80_ms"], t["spread_pct"], t["gbps"], t["pct_peak_bw"], t.get("suspect"))
print("cuda_graph", d["cuda_graph"])
print("sweep", d["sweep"]["rows"])
PY
cp .pytorch-to-triton/peaks.json "$OUT/x/" 2>/dev/null; head -c 600 .pytorch-to-triton/peaks.json 2>/dev/null; echo
run examples_bench "${BENCH_S:-420}" python3 benchmarks/run_examples.py --no-validate --repeats 2 \
    --only "${ONLY:-softmax,matmul,flash_attention,layernorm,rmsnorm,cross_entropy,vector_add,logsumexp,prefix_scan}" \
    --out "$OUT/x/examples_bench.json"
