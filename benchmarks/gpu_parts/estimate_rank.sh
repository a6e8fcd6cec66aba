# PART=estimate_rank (issue 40's last bar, branch i40b): ~4 minutes. Sourced by benchmarks/gpu_session.sh.
# Replaces PART=estimate_fit (timed out at 230 s on 2026-12-06 07:05: it also counted the estimates on the GPU
# machine's CPU). The ESTIMATEs are counted beforehand on the dev CPU (benchmarks/estimate_gallery.py ->
# benchmarks/results/estimate_gallery_cpu.json, committed); this part only TIMES the gallery stages with
# run_benchmark at the sizes and dtype each estimate is for (torch.compile off, one repeat; a 205 s budget ends it),
# then compares per example: order by GPU median vs by ESTIMATE, pairs within 10 % on the GPU are ties.
# Confirms the bar when the last line reads "ranked as measured: M of M examples" over every example.
# Examples are timed most-informative first; those the budget cut are listed "not timed": run the part again with
# RANK_ONLY=<them, comma-separated>, then on the CPU: python benchmarks/estimate_rank.py compare A.json B.json.
TAIL=90 run estimate_rank 235 python3 benchmarks/estimate_rank.py time --budget ${RANK_BUDGET:-205} \
  ${RANK_ONLY:+--only $RANK_ONLY} --out "$OUT/x/estimate_rank_gpu.json" --json-out "$OUT/x/estimate_rank_cmp.json"
