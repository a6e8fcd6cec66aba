# PART=held_out_31_32 (issue 35, a further fresh pair): the known problem and the labelling checks of held_out_31
# (xfuser 0.7.0) and held_out_32 (siglip-kernel 0.1.2, memeff 0.3.1) on the GPU, one process each
# (benchmarks/explore/held_out_31_32.py; exit 1 = the problem shows, 0 = it does not, 2 = not run, 124 = timed out).
# Under 3 minutes (35 s a command, most of it compiles); < 8 GB of GPU memory. No audit is run here.
# Sourced by benchmarks/gpu_session.sh ($OUT/x and stamp set up there). Expected if the labels are right:
#   memeff_denom_repeat 1 (the float atomic_add row/column sums differ from run to run at batch 16384: the known P1;
#     0 would make it a paper-only P1: say so before labelling),
#   block_mask_ragged 0 (the masked load without other= reads 0 for the ragged last block on the GPU: no problem;
#     1 would make it a real P0 at the callers' sizes),
#   vsa_pool 0, siglip_chunk 0, clip_fa 0 (the entries are right at the callers' real sizes; clip_fa also prints the
#     error the fp16 cast of prob costs against float64: a labelling note for precision findings).
cmds="memeff_denom_repeat block_mask_ragged vsa_pool siglip_chunk clip_fa"
declare -A rc_of
for cmd in $cmds; do
  timeout 35 python3 benchmarks/explore/held_out_31_32.py "$cmd" > "$OUT/x/ho3132_$cmd.log" 2>&1
  rc_of[$cmd]=$?; stamp "ho3132_$cmd rc=${rc_of[$cmd]}"
  grep -v -i "warn" "$OUT/x/ho3132_$cmd.log" | tail -n 8 | cut -c1-300
done
echo "| check | rc | result |"
echo "|---|---|---|"
for cmd in $cmds; do
  echo "| $cmd | ${rc_of[$cmd]} | $(grep -E "^$cmd: " "$OUT/x/ho3132_$cmd.log" | tr '\n|' ' /' | cut -c1-400) |"
done
