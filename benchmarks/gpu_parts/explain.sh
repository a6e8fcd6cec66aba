# PART=explain (issue 47 part 3, "show the plan to beat"), ~1.5 minutes. Sourced by benchmarks/gpu_session.sh.
# `pytorch-to-triton bench <reference> --explain` on three KernelBench problems: a conv fusion (L2 35,
# examples/conv_epilogue_pool), a GEMM epilogue (L2 12, benchmarks/tasks/kernelbench) and a norm (L1 36:
# tests/kernelbench_corpus/rmsnorm_dim1 at KernelBench's batch of 112). Each prints the eager and torch.compile
# timings, then torch.compile's plan: one row per kernel or library call, the channels-last buffers, "cuDNN: ...,
# cuBLAS: ..." and "plan: ...".
for job in "examples/conv_epilogue_pool/reference.py" "benchmarks/tasks/kernelbench/kb_l2_12_gemm_multiply_leakyrelu.py" \
           "tests/kernelbench_corpus/rmsnorm_dim1/reference.py --sizes batch_size=112"; do
  ref=${job%% *}
  name=$(basename "$(dirname "$ref")")_$(basename "$ref" .py)
  # shellcheck disable=SC2086  # $job's extra words are the call's options
  TAIL=25 run "explain_$name" "${EXPLAIN_S:-60}" python3 -m pytorch_to_triton bench $job --repeats 1 --explain
done
