# PART=compile (RESULTS.md, the CPU-side compile against the GPU's own), ~5 minutes. Sourced by gpu_session.sh.
# compile_agreement.py in up to four processes (AGREE_GROUPS: space-separated --only lists; default every trial and
# gallery stage), against the launches a CPU saved with Triton 3.9 too. Confirms the rows when every group's agree_here
# is N/N (same success, registers within +-8) and no stage says "budget spent". SCORE_TRIAL=1 adds score_trial.py's
# scoring of trials/2026-12-04 (< 3 minutes).
read -r -a groups <<< "${AGREE_GROUPS:-trials/ cross_entropy,flash_attention,fused_linear geglu,layernorm,logsumexp,matmul prefix_scan,rmsnorm,rope,softmax,swiglu,vector_add}"
for i in "${!groups[@]}"; do
  mkdir -p "$OUT/x/agree$i"
  OUT="$OUT/x/agree$i" timeout 250 python3 benchmarks/compile_agreement.py --budget-s 215 --only "${groups[$i]}" \
    --against benchmarks/results/target_compile_cpu_triton39.json > "$OUT/x/agree$i.log" 2>&1 &
done
wait; stamp "agreement groups done"
for i in "${!groups[@]}"; do
  echo "== group $i (${groups[$i]})"; grep -hE "^agree_|^launches|budget spent|: (PASS|FAIL|ERROR)|Error" "$OUT/x/agree$i.log" | cut -c1-220 | tail -25
done
[ "${SCORE_TRIAL:-0}" = 1 ] && TAIL=25 run score_trial 185 python3 benchmarks/score_trial.py trials/2026-12-04 --budget-s 175 \
  --no-tool
