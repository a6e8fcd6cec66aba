# PART=agree_all (issue 36, 2026-12-06 second session): ~8 minutes. Sourced by benchmarks/gpu_session.sh.
# 1. compile_agreement over EVERY trial stage and EVERY gallery stage, in four concurrent processes (disjoint --only
#    groups; the GPU machine has 16 cores, the validations are compile-bound; agreement is not a timing): each
#    launch the GPU's own validation compiled, compiled again by the CPU-side compile (this Triton, sm_90): same
#    success/failure, registers within +-8. Confirms issue 36's "on the GPU" bar when every group's agree_here is N/N
#    and no stage is "budget spent".
# 2. score_trial.py on the three 2026-12-04 trial problems alone on the machine: issue 36 item 5 wants < 3 minutes.
# 3. trial 45's stage 3 with its float global made a tl.constexpr (benchmarks/explore/trial45_fixed): it must
#    compile and pass on the GPU (issue 36: "After the fix, it compiles on the H200").
groups=("trials/" "cross_entropy,flash_attention,fused_linear" "geglu,layernorm,logsumexp,matmul"
        "prefix_scan,rmsnorm,rope,softmax,swiglu,vector_add")
for i in 0 1 2 3; do
  mkdir -p "$OUT/x/agree$i"
  OUT="$OUT/x/agree$i" timeout 250 python3 benchmarks/compile_agreement.py --budget-s 215 --only "${groups[$i]}" \
    --against benchmarks/results/target_compile_cpu_triton39.json > "$OUT/x/agree$i.log" 2>&1 &
done
wait; stamp "agreement groups done"
for i in 0 1 2 3; do
  echo "== group $i (${groups[$i]})"; grep -hE "^agree_|^launches|budget spent|: (PASS|FAIL|ERROR)|Error" "$OUT/x/agree$i.log" | cut -c1-220 | tail -25
done
TAIL=25 run score_trial 185 python3 benchmarks/score_trial.py benchmarks/trials/2026-12-04 --budget-s 175
TAIL=15 run score_fixed45 90 python3 benchmarks/score_trial.py benchmarks/explore/trial45_fixed --budget-s 80
