# PART=held_out_31_32 (issue 35, a further fresh pair): the known problems and the labelling checks of held_out_31
# (xfuser 0.7.0, flash-colsum 0.1.0) and held_out_32 (siglip-kernel 0.1.2, memeff 0.3.1) on the GPU, one process each
# (benchmarks/explore/held_out_31_32.py; exit 1 = the problem shows, 0 = it does not, 2 = not run, 124 = timed out).
# Under 3 minutes (10 commands, 15-20 s each at most: 175 s; most of it imports and cold compiles); < 8 GB of GPU memory.
# No audit is run here.
# Sourced by benchmarks/gpu_session.sh ($OUT/x and stamp set up there). Expected if the labels are right:
#   colsum_ragged 1, colsum_headdim 1, colsum_causal_d128 1, colsum_causal_qlen 1 (flash-colsum's four known P0s show
#     on the GPU as under the interpreter: each prints WRONG for its bad shapes and ok for its control shape; a
#     compile error for a shape also exits 1 and names it),
#     (the causal kernel's fp32 tl.dot runs in TF32 on the GPU: a control shape a little over the 2e-3 tolerance there
#     is TF32, not the known problems, whose errors are 3-30% or NaN),
#   colsum_repeat 0 or 1 (a labelling note, not a known problem: 1 = the float atomic column sums change the fp16 output
#     from run to run at 16 heads x 4096 tokens, so an atomic_order finding on kernel_noncausal.py:94 is real, as
#     memeff's; 0 = the fp16 cast hides the order at that size),
#   memeff_denom_repeat 1 (the float atomic_add row/column sums differ from run to run at batch 16384: the known P1;
#     0 would make it a paper-only P1: say so before labelling),
#   block_mask_ragged 0 (the masked load without other= reads 0 for the ragged last block on the GPU: no problem;
#     1 would make it a real P0 at the callers' sizes),
#   vsa_pool 0, siglip_chunk 0, clip_fa 0 (the entries are right at the callers' real sizes; clip_fa also prints the
#     error the fp16 cast of prob costs against float64: a labelling note for precision findings).
checks benchmarks/explore/held_out_31_32.py ho3132 20 colsum_ragged:15 colsum_headdim:15 colsum_causal_d128:15 \
  colsum_causal_qlen:15 colsum_repeat:15 memeff_denom_repeat block_mask_ragged vsa_pool siglip_chunk clip_fa
