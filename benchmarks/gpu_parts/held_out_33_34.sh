# PART=held_out_33_34 (issue 35, a further fresh pair): the known problems and the labelling checks of held_out_33
# (late-interaction-kernels 0.4.5) and held_out_34 (cuda-triton-multiarch 0.1.3) on the GPU, in two processes
# (benchmarks/explore/held_out_33_34.py; per check: 1 = the problem shows, 0 = it does not, 2 = not run; a check
# missing from the table ran past its group's limit). Under 2 minutes (70 s + 40 s at most; most of it imports, cold
# compiles and late-interaction's autotune sweeps); < 2 GB of GPU memory. No audit is run here.
# Sourced by benchmarks/gpu_session.sh ($OUT/x and stamp set up there). Expected if the labels are right:
#   lik_examples 0 (maxsim_forward, maxsim_varlen, score_pairs_packed and maxsim_residual right at the callers' sizes,
#     with the Hopper autotune configs),
#   lik_plaid_bitorder 1 (ColBERTv2-packed residuals decoded wrong: 0.1-0.3 off, as on the CPU),
#   lik_plaid_fp32q 1 (a float32 Q runs the dot in bf16: ~4e-2 off against ~2e-4 for fp16; 0 would make it a note),
#   lik_varlen_repeat 1 (the float atomics of maxsim_varlen's grad_D and score_pairs_packed's grad_Q / grad_D
#     differ from run to run: the two known P1s, one line each; a line with True makes that one paper-only: say so
#     before labelling),
#   fa_headdim 1, fa_ragged 1, fa_oob 1 (rows written into the guard past the output), fa_layout 1,
#   rms_magnitude 1 (the fp16 sum of squares overflows on the GPU too; 0 would mean the GPU reduction accumulates in
#     float32: then only the one-value-above-256 row, x * x itself, should still be WRONG - read the lines),
#   swiglu_fp32 1, softmax_rows 0 (its N-D line is a note).
lik="lik_examples lik_plaid_bitorder lik_plaid_fp32q lik_varlen_repeat"
cta="fa_headdim fa_ragged fa_oob fa_layout rms_magnitude swiglu_fp32 softmax_rows"
timeout 70 python3 benchmarks/explore/held_out_33_34.py $lik > "$OUT/x/ho3334_lik.log" 2>&1
stamp "ho3334_lik rc=$?"
timeout 40 python3 benchmarks/explore/held_out_33_34.py $cta > "$OUT/x/ho3334_cta.log" 2>&1
stamp "ho3334_cta rc=$?"
grep -v -i "warn" "$OUT/x/ho3334_lik.log" "$OUT/x/ho3334_cta.log" | grep -v "^.*: *rc " | tail -n 40 | cut -c1-300
echo "| check | rc | result |"
echo "|---|---|---|"
for cmd in $lik $cta; do
  rc=$(grep -h "^rc $cmd=" "$OUT/x/ho3334_lik.log" "$OUT/x/ho3334_cta.log" | head -1 | cut -d= -f2)
  echo "| $cmd | ${rc:-none} | $(grep -h "^$cmd: " "$OUT/x/ho3334_lik.log" "$OUT/x/ho3334_cta.log" | tr '\n|' ' /' | cut -c1-400) |"
done
