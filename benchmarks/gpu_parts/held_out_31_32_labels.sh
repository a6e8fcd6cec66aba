# PART=held_out_31_32_labels (issue 35, held_out_31/32 audited at 454e567, the labeller's GPU checks): the static
# atomic_order P1s labelled real by reading alone ("GPU check pending" in tests/audit_public_corpus/labels.json), whose
# run-to-run difference the interpreter cannot show. Complements PART=held_out_31_32 (the known problems; its
# colsum_repeat and memeff_denom_repeat already confirmed kernel_noncausal.py:94 and distributed_clip_loss.py:72/73).
# About 1-2 minutes (four commands, 45 s each at most, mostly imports and cold compiles), < 2 GB of GPU memory.
# Sourced by benchmarks/gpu_session.sh ($OUT/x, run, stamp). Each runs one kernel 5 times on the same inputs
# (benchmarks/explore/held_out_31_32_labels.py). Expected if the labels are right: 1 for each (some repeat differs
# bitwise from the first):
#   colsum_causal_repeat 1 -> flash_colsum/kernel_causal.py:93 real (0: the fp16 cast hides the order: relabel false),
#   grad_both_repeat 1     -> memeff/distributed_clip_loss.py:125, 127 real,
#   qwen3_denom_repeat 1   -> memeff/_common.py:307 real,
#   qwen3_grad_repeat 1    -> memeff/_common.py:355, 362 real.
# 0 for one of them makes that label a paper-only P1: relabel it false ("repeats agree on the H100"); 124 = timed out.
CHECK_TAIL=6 checks benchmarks/explore/held_out_31_32_labels.py ho3132l 45 colsum_causal_repeat grad_both_repeat \
  qwen3_denom_repeat qwen3_grad_repeat
