# PART=held_out_25_26 (issue 35, third fresh pair): the known problems of held_out_25 (flashnn 0.1.1) and held_out_26
# (auto-gptq 0.7.1, gemlite 0.6.0.post2) on the GPU, one process each (benchmarks/explore/held_out_25_26.py; exit 1 =
# the problem shows, 0 = it does not, 2 = not run, 124 = timed out), and the two out-of-bounds reads under
# compute-sanitizer memcheck with the caching allocator off (PYTORCH_NO_CUDA_MEMORY_CACHING=1: the allocator's blocks
# hide reads past a tensor), one process per size. About 3-4 minutes: compiles (the harness examples on Triton 3.6),
# sanitizer runs of two small GEMMs, < 2 GB of GPU memory. Sourced by benchmarks/gpu_session.sh ($OUT/x, stamp).
# Expected if the labels are right:
#   examples 0 (every harness's example call matches its reference on the GPU too),
#   dq_recompile 1 (3 compiled variants of the dynamic quantiser after 3, 5, 7, 5 tokens),
#   a16w8_repeat 1 (some of 20 split-K runs differ bitwise), autotune_per_call 1 (note: 28 configs timed, not 14),
#   gptq_layout 1 (note: a column-major x is read wrong, the contiguous one right),
#   gptq_tail / gptq_bwd_tail: rc 0 (no Python-visible error: the stored columns are right), and memcheck errors > 0
#   at size 896 (reads past qweight/scales/qzeros; past g_idx, then wild reads), 0 for gptq_tail at 1024 (the control).
checks benchmarks/explore/held_out_25_26.py ho2526 150 examples dq_recompile a16w8_repeat autotune_per_call gptq_layout \
  gptq_tail gptq_bwd_tail
CS=/usr/local/cuda/bin/compute-sanitizer
declare -A mc_of
for run_ in gptq_tail:896 gptq_tail:1024 gptq_bwd_tail:896; do
  cmd=${run_%%:*} size=${run_##*:}
  {
    log="$OUT/x/ho2526_memcheck_${cmd}_$size.log"
    HO2526_SIZE=$size PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 "$CS" --tool memcheck --print-limit 4 \
      python3 benchmarks/explore/held_out_25_26.py "$cmd" > "$log" 2>&1
    mc_of[${cmd}_$size]="rc=$? $(grep -m1 -E 'ERROR SUMMARY' "$log" | tr -d '=' | xargs)"
    stamp "ho2526_memcheck_${cmd}_$size ${mc_of[${cmd}_$size]}"
    grep -m2 -E "Invalid __global__ read|at .*kernel" "$log" | cut -c1-200
  }
done
echo "| memcheck | rc and summary | |"
echo "|---|---|---|"
for key in gptq_tail_896 gptq_tail_1024 gptq_bwd_tail_896; do
  echo "| memcheck $key | ${mc_of[$key]} |  |"
done
