# PART=explain (issue 47 part 3, "show the plan to beat"), ~1.5 minutes. Sourced by benchmarks/gpu_session.sh.
# `pytorch-to-triton bench <reference> --explain` on three KernelBench problems: a conv fusion (examples/
# conv_epilogue_pool, L2 35), a GEMM epilogue and a norm (benchmarks/tasks/kernelbench: L2 12, L1 36). Each prints
# the eager and torch.compile timings, then torch.compile's plan for the reference: one row per kernel or library call
# (kind, cuDNN/cuBLAS, role, ms, share, the ATen ops it fused), the channels-last buffers, "cuDNN: yes|no, cuBLAS:
# yes|no, templates: ..." and "plan: ..." in words: the outputs RESULTS.md quotes.
for ref in examples/conv_epilogue_pool/reference.py benchmarks/tasks/kernelbench/kb_l2_12_gemm_multiply_leakyrelu.py \
           benchmarks/tasks/kernelbench/kb_l1_36_rmsnorm.py; do
  name=$(basename "$(dirname "$ref")")_$(basename "$ref" .py)
  TAIL=25 run "explain_$name" "${EXPLAIN_S:-60}" python3 -m pytorch_to_triton bench "$ref" --repeats 1 --explain
done
