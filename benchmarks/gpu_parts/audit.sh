# PART=audit (the 2026-12-04 sessions): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# one process per set: a set that runs out of time loses only its own figures
start=$SECONDS
# sets not yet audited (audit_probe_precision.py's NOT_YET_AUDITED: issue 35's fresh pair) stay out of the default
# list until the rules are frozen: name them in AUDIT_SETS to audit them
for set in ${AUDIT_SETS:-$(python3 -c "import json, runpy; fresh = set(runpy.run_path('benchmarks/audit_probe_precision.py')['NOT_YET_AUDITED']); print(' '.join(sorted({v['set'] for v in json.load(open('tests/audit_public_corpus/probe_labels.json'))['files'].values()} - fresh)))")}; do
  [ $((SECONDS - start)) -gt 470 ] && { echo "audit_$set: not run (time)"; continue; }
  TAIL=12 run "audit_$set" 90 python3 benchmarks/audit_probe_precision.py --check-repro --only "$set" \
    --json "$OUT/x/audit_$set.json"
done
