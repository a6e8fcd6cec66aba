# PART=stage3: sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# The gallery's stage 3 on the GPU (issue 20, ~9 minutes): attention against SDPA (its own
# script times SDPA beside stage 3), the tools' latency, every stage 3 validated on the GPU.
run explore_attention "${ATT_S:-200}" python3 benchmarks/explore/explore_attention.py
run latency "${LAT_S:-130}" python3 benchmarks/latency.py --calls 10
run validate_stage3 "${VAL_S:-240}" python3 benchmarks/run_examples.py --no-bench --stages stage3.py --trials 1 \
    --only "${ONLY:-cross_entropy,rmsnorm,layernorm,softmax,swiglu,geglu,rope,logsumexp,prefix_scan,fused_linear_cross_entropy,flash_attention}" \
    --out "$OUT/x/validate_stage3.json"
