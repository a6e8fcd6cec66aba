# PART=held_out_30_labels (issue 35, labelling held_out_30: accelerated-scan 0.3.1): two GPU checks of its labels
# (benchmarks/explore/held_out_30_labels.py). About 2 minutes; ~1.5 GB of GPU memory.
# 1. oob: scalar.py's backward_scan (line 82, mask=t > 0 only) reads up to 2047 floats past `states` when T is not a
#    multiple of 2048 (the probe_grad P0, labelled real from the interpreter's bounds check). compute-sanitizer
#    memcheck, caching allocator off, forward + backward at [1, 4, 5000] and [1, 512, 1024]. Expected if the label is
#    right: scalar "Invalid __global__ read" errors in backward_scan (ERRORS > 0), complex 0 errors (its load masks
#    t < seqlen too). scalar 0 errors would make the P0 false on the GPU (relabel probe_labels findings + problems).
# 2. traffic: the 16 uncoalesced_access P1 on complex.py (stride-2 (real, imag) lanes), labelled false. ncu DRAM
#    bytes and L2 sectors of one complex forward_scan and backward_scan ([1, 256, 65536] complex64, 134 MB a tensor)
#    against the ideal, the scalar scan on the same bytes ([1, 256, 131072] float32) beside them. Expected if the
#    labels are right: report rc 0 (complex DRAM read/write within 1.15x of the ideal, like the scalar rows; L2
#    sectors may exceed 1). rc 1 would make the 16 P1s real (labels.json and probe_labels.json findings).
# Sourced by benchmarks/gpu_session.sh ($OUT/x and stamp set up there).
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
declare -A err_of rc_of
for name in scalar complex; do
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 "$CS" --tool memcheck --print-limit 5 \
    python3 benchmarks/explore/held_out_30_labels.py oob "$name" > "$OUT/x/ho30_oob_$name.log" 2>&1
  rc_of[$name]=$?; stamp "ho30_oob_$name rc=${rc_of[$name]}"
  err_of[$name]=$(grep -oE "ERROR SUMMARY: [0-9]+" "$OUT/x/ho30_oob_$name.log" | grep -oE "[0-9]+$" | tail -1)
  grep -E "held_out_30_labels|Invalid|at .*backward_scan|ERROR SUMMARY" "$OUT/x/ho30_oob_$name.log" | head -8 | cut -c1-300
done
timeout 200 "$NCU" --csv --print-units base --log-file "$OUT/x/ho30_traffic.csv" -k regex:"forward_scan|backward_scan" \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum \
  python3 benchmarks/explore/held_out_30_labels.py run > "$OUT/x/ho30_traffic_run.log" 2>&1
echo "ncu rc=$?"; stamp "ho30_traffic ncu"
tail -n 5 "$OUT/x/ho30_traffic_run.log" | cut -c1-300
python3 benchmarks/explore/held_out_30_labels.py report "$OUT/x/ho30_traffic.csv" | tee "$OUT/x/ho30_traffic_report.log"
echo "report rc=${PIPESTATUS[0]}"
echo "| check | rc | memcheck errors | expected |"
echo "|---|---|---|---|"
echo "| oob scalar | ${rc_of[scalar]} | ${err_of[scalar]:-?} | > 0 (P0 real) |"
echo "| oob complex | ${rc_of[complex]} | ${err_of[complex]:-?} | 0 |"
echo "| traffic | see report rc | - | 0: DRAM <= 1.15x ideal (P1s false) |"
