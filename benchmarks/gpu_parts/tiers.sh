# PART=tiers (issue 35, ~4 min): the audit's two tiers and its contract on CUDA. Sourced by benchmarks/gpu_session.sh
# (run, stamp, $OUT/x set up there). 1. benchmarks/audit_probe_precision.py --tiers: the labelled fixtures (clean
# kernels: no P0/P1; robustness-only failures apart under their kind; the contract bug a P0 with its "assumed:" line;
# ModelNew's unreached helper: notes only); confirms when it prints "10/10 fixtures as expected" (matmul_tf32's TF32
# difference must show as robustness "precision", not P0). 2. The held-out sets whose false P0s issue 35 names, with
# the final rules: confirms when every P0 row reads 100 % and every reproducer fails.
run audit_tiers 150 python3 benchmarks/audit_probe_precision.py --tiers
start=$SECONDS
for set in ${TIER_SETS:-held_out_10 held_out_12 held_out_15 held_out_18 held_out_11}; do
  [ $((SECONDS - start)) -gt 90 ] && { echo "audit_$set: not run (time)"; continue; }
  TAIL=6 run "audit_$set" 60 python3 benchmarks/audit_probe_precision.py --check-repro --only "$set" \
    --json "$OUT/x/audit_$set.json"
done
echo "summary: audit_tiers -> '10/10 fixtures as expected'; each set's P0 precision row -> 100 %"
