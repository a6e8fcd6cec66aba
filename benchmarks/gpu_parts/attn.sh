# PART=attn (issue 38, attention and rmsnorm): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# ~4.5-5 minutes. Needs liger-kernel 0.8.5 in .whl/ for the Liger column (otherwise that column says why not).
# 1. benchmarks/explore/attention_sweep.py: B4 H32 S4096 bf16, causal/non-causal x D128/D64; SDPA (cuDNN) and the
#    shipped stage 3 timed in the same process, then stage3.FwdPlan candidates: TMA + warp specialization at
#    num_warps=4 (Triton 3.6's Hopper pass skips 8-warp kernels), two 64-row halves per program, low-register
#    pointer tiles; backward config pairs; each checked against fp32 SDPA before do_bench (L2 flushed, inputs
#    rotated). Prints "adopt: FWD_PLANS[...] = ..." / "adopt: BWD_PLANS[...]" lines for stage3's tables.
# 2. benchmarks/norm_sweep.py --ops rmsnorm: 8192x8192, 8192x1024, 16384x16384 bf16, forward and forward+backward,
#    stage 3 (shipped and candidate FWD_PINS / BWD_PINS) beside torch.compile and Liger (layernorm too: PART=norms).
EXPLORE_BUDGET_S=180 TAIL=24 run attention_sweep 210 python3 benchmarks/explore/attention_sweep.py
TAIL=10 run rmsnorm_sweep 100 python3 benchmarks/norm_sweep.py --ops rmsnorm --budget-s 75
echo "=== attn part summary (full tables: attention_sweep.log, rmsnorm_sweep.log, *.json)"
sed -n '/=== per combo/,$p' "$OUT/x/attention_sweep.log" | cut -c1-200
sed -n '/=== per op/,$p' "$OUT/x/rmsnorm_sweep.log" | cut -c1-200
