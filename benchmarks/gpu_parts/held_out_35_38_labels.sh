# PART=held_out_35_38_labels (issue 45's two fresh pairs): the known problems and labelling checks of held_out_35
# (rotalabs-accel 1.1.1), held_out_36 (moe-ops 0.1.0), held_out_37 (flashlib 0.4.0, torch-fps 0.6.0) and held_out_38
# (fasterkernels 0.2.0, fused-turboquant 0.1.0) on the GPU, one process per pair
# (benchmarks/explore/held_out_35_38.py; per check: 1 = the problem shows, 0 = it does not, 2 = not run; a check
# missing from the table ran past its group's limit). About 2 minutes (90 s + 60 s at most; most of it imports, cold
# compiles and the moe-ops autotuners' sweeps); < 2 GB of GPU memory. No audit is run here.
# Sourced by benchmarks/gpu_session.sh ($OUT/x and stamp set up there). Expected if the labels are right:
#   examples_a 0 (every held_out_35/36 harness example right on the GPU, rope excepted: see rope_pairs),
#   rope_pairs 1, rope_gqa 1 (elements written past k_out), rope_positions 1, rope_headdim 1 (a note: 96 and 80 raise),
#   gemm_dtype 1 (bf16 and float32 activations fail to compile), gemm_autotune_m: a labelling note, its table prints
#     first- and second-call times per token count (1 while the autotuner keeps an entry per M),
#   permute_experts 1, permute_recompile 1 (one compiled variant per token count; 0 would make the P1 paper-only),
#   permute_order 1 (grouped_gemm's weight gradient differs from run to run; 0 would make the P1 paper-only: say so),
#   gmm_offsets_ends 1, unpermute_max_tokens 1 (a note);
#   examples_b 0 (every held_out_37/38 example right, paged_flash_decode excepted: see fk_paged_compile),
#   fk_sink 1, fk_varlen_sync 1 (the call syncs the host), fk_split_buffers 1 (elements written past the 8-split
#     buffers), fk_sliding_window 1 (NaN), fk_paged_compile 1 (the example call fails to compile: Break),
#   scaler_repeat: a labelling note (1: the float64 atomics change the float32 statistics from run to run, so a
#     float-atomic P1 on scaler.py is real; 0: such a finding is paper-only).
a="examples_a rope_pairs rope_gqa rope_positions rope_headdim gemm_dtype gemm_autotune_m permute_experts permute_recompile permute_order gmm_offsets_ends unpermute_max_tokens"
b="examples_b fk_sink fk_varlen_sync fk_split_buffers fk_sliding_window fk_paged_compile scaler_repeat"
timeout 90 python3 benchmarks/explore/held_out_35_38.py $a > "$OUT/x/ho3538_a.log" 2>&1
stamp "ho3538_a rc=$?"
timeout 60 python3 benchmarks/explore/held_out_35_38.py $b > "$OUT/x/ho3538_b.log" 2>&1
stamp "ho3538_b rc=$?"
logs=$(ls "$OUT"/x/ho3538_*.log)
grep -v -i "warn" $logs | grep -v "^.*: *rc " | tail -n 50 | cut -c1-300
echo "| check | rc | result |"
echo "|---|---|---|"
for cmd in $a $b; do
  rc=$(grep -h "^rc $cmd=" $logs | head -1 | cut -d= -f2)
  echo "| $cmd | ${rc:-none} | $(grep -h "^$cmd: " $logs | tr '\n|' ' /' | cut -c1-400) |"
done
