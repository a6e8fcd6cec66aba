# PART=estimate_vs_h100 (issue 46's GPU bars, branch h46): at most 3.5 minutes on an H100. Sourced by benchmarks/gpu_session.sh.
# 1. compile62: the one trial stage never compared with the GPU's own compile (62_Matmul_GroupNorm_LeakyReLU_Sum,
#    stage 3: PART=agree_rest's budget cut it): validated once on the GPU with each launch's real compile recorded, each
#    launch compiled again by the CPU-side compile (this image's Triton, sm_90). Confirms it when its agree_here line
#    reads N/N (same success, registers within +-8 of the GPU's own).
# 2. estimate: run_benchmark on this GPU (torch.compile off, one repeat) for every gallery example and every stage of
#    the two trial folders (trials/2026-12-04, 2026-12-06), at the sizes and dtype the CPU's ESTIMATE is for
#    (counted beforehand on the dev CPU: benchmarks/estimate_rank.py count -> benchmarks/results/estimate_gallery_cpu.json,
#    committed; timed here with today's model from the counts it keeps). Trials first, then the gallery, most
#    informative first; a 125 s budget ends it (folders not started are listed "not timed": run the part again with
#    RANK_ONLY=<their names, comma-separated>, then merge: python benchmarks/estimate_rank.py compare A.json B.json).
#    One line per stage: GPU median ms, ESTIMATE µs, GPU/ESTIMATE, within 2x (yes/NO); per folder the two orders and
#    "same order (10 % GPU ties)"; the last line "within 2x: N of M stages; ranked as measured: A of B folders".
#    Confirms the bar when N = M and A = B.
TAIL=25 run compile62 60 python3 benchmarks/compile_agreement.py --budget-s 40 \
  --only 62_Matmul_GroupNorm_LeakyReLU_Sum/stage3
grep -h -E "^agree_|^launches|budget spent|stage3" "$OUT/x/compile62.log" | cut -c1-300 | tail -8
TAIL=120 run estimate 150 python3 benchmarks/estimate_rank.py time --budget ${RANK_BUDGET:-125} \
  ${RANK_ONLY:+--only $RANK_ONLY} --out "$OUT/x/estimate_vs_h100_gpu.json" --json-out "$OUT/x/estimate_vs_h100_cmp.json"
