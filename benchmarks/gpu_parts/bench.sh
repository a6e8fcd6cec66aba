# PART=bench (RESULTS.md, speed: timing honesty and the gallery's matmul and vector add): sourced by
# benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there). Every timing alone on the GPU, one after the other
# (~8 minutes with its defaults: ONLY=softmax,rmsnorm picks examples, the *_S variables are the limits).
# 1. timing_check.py: "vadd 2^26 fp32: tool A / B ms, events C ms: tool vs events +X %, run to run Y %" and the peaks
#    the tool measured afresh (copy GB/s, bf16 matmul TFLOP/s);
# 2. run_examples.py --no-validate: run_benchmark of every listed example's stages (median ms, vs eager / compile).
rm -f .pytorch-to-triton/peaks.json  # measured afresh in this run
TAIL=4 run timing_check "${TIMING_S:-110}" python3 benchmarks/timing_check.py --out "$OUT/x/timing.json"
cp .pytorch-to-triton/peaks.json "$OUT/x/" 2>/dev/null
run examples_bench "${BENCH_S:-420}" python3 benchmarks/run_examples.py --no-validate --repeats 2 \
    --only "${ONLY:-softmax,matmul,flash_attention,layernorm,rmsnorm,cross_entropy,vector_add,logsumexp,prefix_scan}" \
    --out "$OUT/x/examples_bench.json"
