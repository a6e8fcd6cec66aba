# PART=held_out_23_24_p1 (issue 35, labels of the fresh pair held_out_23 / held_out_24): sourced by
# benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there); ~3 minutes. NOT the audit: it times, by hand
# (benchmarks/explore/held_out_23_24/p1_costs.py), the two kinds of P1 finding labelled false by reading:
# (1) global_roundtrip, minference/flash_attn_triton.py:160 and :191: the kernel as shipped vs a copy without the TMP
#     store/load pairs, decode (q 1, kv 4096) and causal prefill (4096): the labels hold if shipped / without < 1.05
#     and the outputs are equal;
# (2) autotune_key, fp_quant mxfp4.py:9 and nvfp4.py:9 (key=[]): every BLOCK_SIZE config at the callers' sizes (1 to
#     14336 rows x 4096): the labels hold if the config a first call at one size keeps is < 1.2x the best at every
#     other size. A larger figure turns the label to real (fix the labels in probe_labels.json and RESULTS.md).
P=benchmarks/explore/held_out_23_24/p1_costs.py
TAIL=6 run h2324p1_roundtrip 90 python3 $P roundtrip
TAIL=20 run h2324p1_autotune 150 python3 $P autotune
echo "== held_out_23_24_p1 summary"
grep -hE "^\| (decode|prefill)" "$OUT/x/h2324p1_roundtrip.log" | cut -c1-160
grep -h "worst slowdown" "$OUT/x/h2324p1_autotune.log" | cut -c1-160
# (3) the static label of streaming_kernel.py:344 (real): _score_kernel's padded query rows join the per-key sums
#     when the key length is a multiple of 64 and the query length is not (exit 1 = shown, as the label says).
TAIL=5 run h2324p1_score 60 python3 benchmarks/explore/held_out_23_24/streaming_score.py
grep -h "streaming_score:" "$OUT/x/h2324p1_score.log" | cut -c1-160
