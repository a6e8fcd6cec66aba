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
checks benchmarks/explore/held_out_27_28.py ho2728 90 rms_rope_grid entmax_interp mx_bf16 mx_ragged entmax_autotune:150 \
  adaln_mean e5m3_nan
