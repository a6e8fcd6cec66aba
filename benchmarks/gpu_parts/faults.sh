# PART=faults (RESULTS.md, fault handling), ~8 minutes (lower the *_S limits for a shorter call). Sourced by
# benchmarks/gpu_session.sh. The fault suite alone (its recovery times shared with nothing), tests/test_gpu.py and the
# containment tests, then side by side the audit's compiled analysis of every stage 3 and the examples' validation.
run fault_suite "${FAULT_S:-230}" python3 benchmarks/fault_suite.py --out "$OUT/x/faults"
sed -n '/^|/p' "$OUT/x/faults/fault_suite.md" 2>/dev/null | cut -c1-230 | head -60
grep -A1 "next call failed" "$OUT/x/faults/fault_suite.md" 2>/dev/null | cut -c1-400 | head -20
run pytest_gpu "${PYTEST_S:-110}" python3 -m pytest -q -ra -p no:cacheprovider --timeout 100 tests/test_gpu.py
run containment_pytest "${CONTAIN_S:-150}" python3 -m pytest -q -ra -p no:cacheprovider --timeout 140 -m gpu \
    tests/test_containment.py tests/test_composition.py
( for e in examples/*/; do
    timeout "${COMPILED_S:-60}" python3 -m pytorch_to_triton audit "$e"stage3.py --reference "$e"reference.py --no-probe \
      -q 2>&1 | grep -iE "regist|spill|occupancy|vectori|wgmma|P0|P1" | sed "s|^|$(basename "$e"): |" | head -8
  done > "$OUT/x/compiled.log" ) &
( timeout "${VALID_S:-170}" python3 benchmarks/run_examples.py --no-bench \
    --only softmax,layernorm,rmsnorm,vector_add,logsumexp,prefix_scan,matmul,cross_entropy,flash_attention \
    --out "$OUT/x/examples_validation.json" > "$OUT/x/examples_validation.log" 2>&1; echo "rc=$?" >> "$OUT/x/examples_validation.log" ) &
wait; stamp compiled_and_validation
cut -c1-260 "$OUT/x/compiled.log"
cut -c1-400 "$OUT/x/examples_validation.log" | grep -v "^\s*$" | tail -30
