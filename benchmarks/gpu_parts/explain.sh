# PART=explain (issue 47 part 3, "show the plan to beat"): sourced by benchmarks/gpu_session.sh. ~1.5 minutes.
# `pytorch-to-triton bench <reference> --explain` (no candidates: eager and torch.compile are timed, then
# torch.compile's kernels for the reference are listed) on three KernelBench problems:
#   a conv fusion  examples/conv_epilogue_pool/reference.py (L2 35: conv, subtract, hardswish, maxpool, mish)
#   a GEMM epilogue benchmarks/tasks/kernelbench/kb_l2_12_gemm_multiply_leakyrelu.py (L2 12: Linear, x 2, LeakyReLU)
#   a norm          benchmarks/tasks/kernelbench/kb_l1_36_rmsnorm.py (L1 36: RMSNorm over dim 1, 7.5 GB fp32)
# Each prints the timing rows, then "torch.compile's plan for the reference (...; torch.profiler, device time per
# call over 10 calls)": one row per kernel or library call (kind, cuDNN/cuBLAS, role, ms, share, the ATen ops it
# fused), the channels-last buffers, "cuDNN: yes|no, cuBLAS: yes|no, templates: ...", and "plan: ..." in words.
# These are the --explain outputs RESULTS.md quotes.
for ref in examples/conv_epilogue_pool/reference.py benchmarks/tasks/kernelbench/kb_l2_12_gemm_multiply_leakyrelu.py \
           benchmarks/tasks/kernelbench/kb_l1_36_rmsnorm.py; do
  name=$(basename "$(dirname "$ref")")_$(basename "$ref" .py)
  TAIL=25 run "explain_$name" "${EXPLAIN_S:-60}" python3 -m pytorch_to_triton bench "$ref" --repeats 1 --explain
done
