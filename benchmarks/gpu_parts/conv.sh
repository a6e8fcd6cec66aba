# PART=conv (issue 47 part 3), ~2.5 minutes. Sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# examples/conv_epilogue_pool (KernelBench L2 35, 128 x 64 x 128 x 128 fp32): 1. validate the three stages at full size
# ("PASS|FAIL examples/conv_epilogue_pool/stageN.py: ..."); 2. bench them vs eager and torch.compile with --explain
# (the timing table, torch.compile's kernels for the reference); 3. benchmarks/conv_sweep.py: prints "adopt:
# PLANS[(64, 128, 3, 2)] = {...}" (copy into stage3.PLANS) and "acceptance: conv stage 3 ... vs torch.compile ...:
# X.XXx (>= 1.0): PASS|FAIL" for the shipped and the adopted plan.
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
