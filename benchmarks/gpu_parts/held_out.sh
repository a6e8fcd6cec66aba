# PART=held_out (RESULTS.md, audit precision: the held-out labels checked on the GPU). Sourced by
# benchmarks/gpu_session.sh. benchmarks/held_out.py runs each check of the pairs in HELD_OUT (e.g. "33_34 29_30";
# default: every check never run on a GPU) in its own process (memcheck ones under compute-sanitizer), then one table:
# rc (1 = the labelled problem shows, 0 = it does not, 2 = not run, 124 = timed out) beside what the label expects.
# Keep a call under 10 minutes (`python3 benchmarks/held_out.py` lists every check with its limit).
if [ -n "${HELD_OUT:-}" ]; then
  for pair in $HELD_OUT; do
    python3 benchmarks/held_out.py "$pair" --logs "$OUT/x" 2>&1 | tee "$OUT/x/held_out_$pair.md" | cut -c1-400
  done
else
  python3 benchmarks/held_out.py --pending --logs "$OUT/x" 2>&1 | tee "$OUT/x/held_out_pending.md" | cut -c1-400
fi
