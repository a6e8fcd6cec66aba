# PART=held_out (RESULTS.md, audit precision: the labels of the held-out pairs checked on the GPU). Sourced by
# benchmarks/gpu_session.sh ($OUT/x set up there). benchmarks/held_out.py runs each check of the pairs named in
# HELD_OUT (e.g. HELD_OUT="33_34 29_30"; default: every check never run on a GPU, --pending) in its own process within
# its limit (memcheck checks under compute-sanitizer, PyTorch's caching allocator off), then prints one table: rc
# (1 = the labelled problem shows, 0 = it does not, 2 = not run, 124 = timed out) beside what the label expects.
# `python3 benchmarks/held_out.py` lists every pair's checks with their expectations and limits; keep a call under
# 10 minutes (the limits of the pairs named add up).
if [ -n "${HELD_OUT:-}" ]; then
  for pair in $HELD_OUT; do
    python3 benchmarks/held_out.py "$pair" --logs "$OUT/x" 2>&1 | tee "$OUT/x/held_out_$pair.md" | cut -c1-400
  done
else
  python3 benchmarks/held_out.py --pending --logs "$OUT/x" 2>&1 | tee "$OUT/x/held_out_pending.md" | cut -c1-400
fi
