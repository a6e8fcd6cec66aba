# PART=agree_rest (issue 36's "on the GPU" bar, the stages PART=agree_all's budget left out): ~4 minutes. Sourced by
# benchmarks/gpu_session.sh. compile_agreement (the GPU's own compile of every launch its validation made, against
# the CPU-side target compile on this host's Triton, sm_90: same success, registers within +-8) over 62's three,
# 33's three, 57's first two and the second trial's 21/47 stages, four groups side by side. Confirms the bar for
# these when every group's agree_here is N/N and no stage is "budget spent".
groups=("62_Matmul" "33_VanillaRNN" "57_Conv2d_ReLU_HardSwish/stage1,57_Conv2d_ReLU_HardSwish/stage2,21_Conv2d"
        "47_NetVlad")
for i in 0 1 2 3; do
  mkdir -p "$OUT/x/rest$i"
  OUT="$OUT/x/rest$i" timeout 250 python3 benchmarks/compile_agreement.py --budget-s 215 --only "${groups[$i]}" \
    > "$OUT/x/rest$i.log" 2>&1 &
done
wait; stamp "agreement groups done"
for i in 0 1 2 3; do
  echo "== group $i (${groups[$i]})"; grep -hE "^agree_|^launches|budget spent|: (PASS|FAIL|ERROR)|Error" "$OUT/x/rest$i.log" | cut -c1-220 | tail -12
done
