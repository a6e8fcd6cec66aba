# PART=held_out_23_24 (issue 35, fresh batches held_out_23 / held_out_24): sourced by benchmarks/gpu_session.sh (run,
# stamp, $OUT/x set up there); ~2-3 minutes. NOT the audit: it runs the batches' entries by hand
# (benchmarks/explore/held_out_23_24/gpu_checks.py) to confirm, on Triton 3.6 and real fp8 conversion, what the CPU
# interpreter cannot: (1) every harness's example call agrees with its reference, except streaming_kernel's head_dim-96
# example (its known P0); (2) that P0: streaming_forward at head_dim 96 matches softmax at 1/sqrt(128), not
# 1/sqrt(96); (3) block_sparse_attention's batch-of-2 out-of-bounds read of seqlens, by compute-sanitizer memcheck
# with the caching allocator off; (4) the compiled variants per token count (n_elements / rows constexprs).
G=benchmarks/explore/held_out_23_24/gpu_checks.py
TAIL=12 run h2324_harnesses 120 python3 $G harnesses
TAIL=4 run h2324_streaming 60 python3 $G streaming
TAIL=4 run h2324_recompile 60 python3 $G recompile
TAIL=3 run h2324_bsa_plain 45 env PYTORCH_NO_CUDA_MEMORY_CACHING=1 python3 $G bsa_batch
TAIL=3 run h2324_bsa_memcheck 90 env PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck \
  --print-limit 4 python3 $G bsa_batch
echo "== held_out_23_24 summary"
grep -hE "^held_out_2[34] " "$OUT/x/h2324_harnesses.log" | cut -c1-160
grep -h "head_dim" "$OUT/x/h2324_streaming.log" | cut -c1-160
grep -h "compiled variants" "$OUT/x/h2324_recompile.log" | cut -c1-110
grep -h "batch of 2" "$OUT/x/h2324_bsa_plain.log" | cut -c1-160
echo "memcheck: $(grep -c 'Invalid __global__ read' "$OUT/x/h2324_bsa_memcheck.log") invalid global reads;" \
  "$(grep -m1 -oE '_triton_block_sparse_attn_fwd_kernel' "$OUT/x/h2324_bsa_memcheck.log" || echo 'kernel not named')"; \
  grep -m1 "ERROR SUMMARY" "$OUT/x/h2324_bsa_memcheck.log"
