# PART=conv (issue 47 part 3): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there). ~2.5 minutes.
# examples/conv_epilogue_pool (KernelBench L2 35_Conv2d_Subtract_HardSwish_MaxPool_Mish, 128 x 64 x 128 x 128 fp32):
# 1. validate: the three stages at full size on the GPU (the validator's GPU default: full size plus odd, small and
#    layout variants; the sidecar's TF32 tolerance). Prints "PASS|FAIL examples/conv_epilogue_pool/stageN.py: ...".
# 2. bench: run_benchmark of the three stages vs eager and torch.compile (2 repeats) with --explain: the timing table
#    (median ms, "vs eager", "vs compile") and torch.compile's plan for the reference (its kernels, each one's time,
#    cuDNN yes/no, channels-last buffers).
# 3. benchmarks/conv_sweep.py: stage 3's plans (igemm tiles x NCHW/channels-last, cudnn + Triton epilogue) timed beside
#    eager and compile; prints "adopt: PLANS[(64, 128, 3, 2)] = {...}" (copy into stage3.PLANS with the numbers) and
#    "acceptance: conv stage 3 ... vs torch.compile ...: X.XXx (>= 1.0): PASS|FAIL" (shipped, and with the adopted plan).
EX=examples/conv_epilogue_pool
TAIL=6 run conv_validate "${CONV_VAL_S:-100}" python3 -m pytorch_to_triton validate $EX/reference.py $EX/stage1.py \
    $EX/stage2.py $EX/stage3.py --trials 1
TAIL=30 run conv_bench "${CONV_BENCH_S:-100}" python3 -m pytorch_to_triton bench $EX/reference.py $EX/stage1.py \
    $EX/stage2.py $EX/stage3.py --repeats 2 --explain
TAIL=12 run conv_sweep "${CONV_SWEEP_S:-110}" python3 benchmarks/conv_sweep.py --budget-s "${CONV_SWEEP_BUDGET_S:-90}"
echo "=== conv part summary (full: conv_validate.log, conv_bench.log, conv_sweep.log, conv_sweep.json)"
grep -E "^(PASS|FAIL)" "$OUT/x/conv_validate.log" | cut -c1-240
grep -E "^(impl|eager|torch.compile|examples)" "$OUT/x/conv_bench.log" | cut -c1-200
sed -n '/=== conv_epilogue_pool/,$p' "$OUT/x/conv_sweep.log" | cut -c1-260
