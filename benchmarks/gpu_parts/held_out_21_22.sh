# PART=held_out_21_22 (issue 35, fresh batches): the known problems of held_out_21 (conch-triton-kernels 1.3) and
# held_out_22 (cut-cross-entropy 25.1.1) on the GPU, one process each (benchmarks/explore/held_out_21_22.py; exit 1 =
# the problem shows, 0 = it does not, 2 = not run, 124 = timed out). About 3 minutes: compiles, <= 20 GB of GPU memory.
# Sourced by benchmarks/gpu_session.sh ($OUT/x and stamp set up there). Expected if the labels are right:
#   int8_round 1 (truncation on the GPU too), gelu_half 1 (fp16/bf16 CompilationError, fp32 matches),
#   cache_hnd 1 (HND wrong, NHD right), int8_strided 1 (note), cce_repeat 1 (some of lse/logit_avg/neg_dot/dE/dC differ run to run),
#   rms_int32 and cce_int32: 1 if the int32 offsets wrap on real hardware (robustness notes, not known P0s).
checks benchmarks/explore/held_out_21_22.py ho2122 150 int8_round gelu_half cache_hnd int8_strided cce_repeat rms_int32 \
  cce_int32
