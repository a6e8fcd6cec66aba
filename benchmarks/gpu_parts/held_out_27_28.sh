# PART=held_out_27_28 (issue 35, a further fresh pair): the known problems and notes of held_out_27 (comfy-kitchen
# 0.2.40) and held_out_28 (amd-quark 0.13, adasplash 0.2.2) on the GPU, one process each
# (benchmarks/explore/held_out_27_28.py; exit 1 = the problem shows, 0 = it does not, 2 = not run, 124 = timed out).
# About 3 minutes: compiles, and 30-config autotunes (one per row length: entmax_interp 1, entmax_autotune 2); < 2 GB
# of GPU memory.
# Sourced by benchmarks/gpu_session.sh ($OUT/x and stamp set up there). Expected if the labels are right:
#   rms_rope_grid 1 (65535 tokens run and match; 65536 and 79200 fail to launch: the known P0),
#   entmax_interp 0 (on the GPU the public call runs and matches: the P0 is the interpreter mode's),
#   mx_bf16 0 (bf16 matches on the GPU: the CPU mismatch is an interpreter gap; 1 would make it a real P0 of the kernel),
#   mx_ragged 0 (in_features 48 right on the GPU: the CPU heap corruption is the interpreter's `and`),
#   entmax_autotune 1 (each new row length autotunes again: a labelling note), adaln_mean 1 and e5m3_nan 1 (notes).
cmds="rms_rope_grid entmax_interp mx_bf16 mx_ragged entmax_autotune adaln_mean e5m3_nan"
declare -A rc_of
for cmd in $cmds; do
  lim=90; [ "$cmd" = entmax_autotune ] && lim=150
  timeout $lim python3 benchmarks/explore/held_out_27_28.py "$cmd" > "$OUT/x/ho2728_$cmd.log" 2>&1
  rc_of[$cmd]=$?; stamp "ho2728_$cmd rc=${rc_of[$cmd]}"
  grep -v -i "warn" "$OUT/x/ho2728_$cmd.log" | tail -n 8 | cut -c1-300
done
echo "| check | rc | result |"
echo "|---|---|---|"
for cmd in $cmds; do
  echo "| $cmd | ${rc_of[$cmd]} | $(grep -E "^$cmd: " "$OUT/x/ho2728_$cmd.log" | tr '\n|' ' /' | cut -c1-400) |"
done
