# PART=explore: sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# Issue 20's exploration scripts (benchmarks/explore/), EXPLORE="norms glu_rope ..." picks
# them (default: attention flce norms glu_rope reductions host), LIMIT seconds each (200).
for e in ${EXPLORE:-attention flce norms glu_rope reductions host}; do
  run "explore_$e" "${LIMIT:-200}" python3 "benchmarks/explore/explore_$e.py"
done
