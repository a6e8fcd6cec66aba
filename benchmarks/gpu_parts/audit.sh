# PART=audit (RESULTS.md, audit precision on CUDA): sourced by benchmarks/gpu_session.sh. One process per set (one out
# of time loses only its own figures); default: every set but audit_probe_precision.py's NOT_YET_AUDITED (AUDIT_SETS).
start=$SECONDS
for set in ${AUDIT_SETS:-$(python3 -c "import runpy; m = runpy.run_path('benchmarks/audit_probe_precision.py'); print(' '.join(s for s in m['SETS'] if s not in m['NOT_YET_AUDITED']))")}; do
  [ $((SECONDS - start)) -gt 470 ] && { echo "audit_$set: not run (time)"; continue; }
  TAIL=12 run "audit_$set" 90 python3 benchmarks/audit_probe_precision.py --check-repro --only "$set" \
    --json "$OUT/x/audit_$set.json"
done
