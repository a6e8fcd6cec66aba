# PART=estimate_vs_h100 (issue 46's GPU bars), 3.5 minutes at most. Sourced by benchmarks/gpu_session.sh.
# 1. compile62: 62_Matmul_GroupNorm_LeakyReLU_Sum's stage 3 against the CPU-side compile (confirmed: agree_here N/N).
# 2. estimate_rank.py time: run_benchmark of every gallery and trial stage at the sizes and dtype of the CPU's ESTIMATE
#    (benchmarks/results/estimate_gallery_cpu.json), trials first, within 125 s (folders not started are "not timed":
#    rerun with RANK_ONLY=<names>, then `estimate_rank.py compare A.json B.json`). The last line, "within 2x: N of M
#    stages; ranked as measured: A of B folders", confirms the bar when N = M and A = B.
TAIL=25 run compile62 60 python3 benchmarks/compile_agreement.py --budget-s 40 \
  --only 62_Matmul_GroupNorm_LeakyReLU_Sum/stage3
grep -h -E "^agree_|^launches|budget spent|stage3" "$OUT/x/compile62.log" | cut -c1-300 | tail -8
TAIL=120 run estimate 150 python3 benchmarks/estimate_rank.py time --budget ${RANK_BUDGET:-125} \
  ${RANK_ONLY:+--only $RANK_ONLY} --out "$OUT/x/estimate_vs_h100_gpu.json" --json-out "$OUT/x/estimate_vs_h100_cmp.json"
