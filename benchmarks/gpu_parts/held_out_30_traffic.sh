# PART=held_out_30_traffic (issue 35, labelling held_out_30): is accelerated-scan's complex scan (complex.py) short of
# coalesced main traffic? The static audit reports its (real, imag) loads and stores at P1 uncoalesced_access (lanes
# of stride 2); the labels say false: the partner access at offset + 1 uses the other half of the same sectors, so
# DRAM traffic stays at the ideal. ncu measures DRAM bytes and L2 sectors of one complex forward_scan and
# backward_scan ([1, 256, 65536] complex64, 134 MB a tensor) and of the scalar scan on the same bytes ([1, 256,
# 131072] float32, unit-stride lanes) as the yardstick (benchmarks/explore/held_out_30_traffic.py). About 1 minute
# (4 profiled launches, a few ncu passes each); ~1.5 GB of GPU memory.
# Sourced by benchmarks/gpu_session.sh ($OUT/x and stamp set up there). Expected if the labels are right:
#   report rc 0: complex forward/backward DRAM read and write within 1.15x of the ideal, like the scalar rows
#   (L2 sectors may be above 1: the cost stays inside the caches). rc 1 (DRAM > 1.15x ideal) would make the 16
#   uncoalesced_access P1 findings on complex.py real: relabel them (labels.json, probe_labels.json findings).
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 200 "$NCU" --csv --print-units base --log-file "$OUT/x/ho30_traffic.csv" -k regex:"forward_scan|backward_scan" \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum \
  python3 benchmarks/explore/held_out_30_traffic.py run > "$OUT/x/ho30_traffic_run.log" 2>&1
echo "ncu rc=$?"; stamp "ho30_traffic ncu"
tail -n 5 "$OUT/x/ho30_traffic_run.log" | cut -c1-300
python3 benchmarks/explore/held_out_30_traffic.py report "$OUT/x/ho30_traffic.csv"
echo "report rc=$?"
