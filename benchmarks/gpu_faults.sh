#!/usr/bin/env bash
# GPU correctness session (nothing here is a speed figure): the fault suite alone (its recovery times are
# not shared with other work), tests/test_gpu.py, then compiled analysis and the examples' validation.
set -u
source "$(dirname "$0")/gpu_common.sh"
stamp start
timeout ${FAULT_S:-230} python benchmarks/fault_suite.py --out "$OUT/faults" > "$OUT/faults.log" 2>&1
echo "fault_suite rc=$?"; stamp faults
sed -n '/^|/p' "$OUT/faults/fault_suite.md" 2>/dev/null | cut -c1-230 | head -60
timeout ${PYTEST_S:-110} python -m pytest -q -ra -p no:cacheprovider --timeout 100 tests/test_gpu.py > "$OUT/pytest_gpu.txt" 2>&1
echo "pytest rc=$?"; stamp test_gpu
grep -A1 "next call failed" "$OUT/faults/fault_suite.md" 2>/dev/null | cut -c1-400 | head -20
# Issue 25 items 3-4: device asserts contained per case (candidate and reference), Triton's GPU-time share
timeout ${CONTAIN_S:-150} python -m pytest -q -ra -p no:cacheprovider --timeout 140 -m gpu tests/test_containment.py \
    tests/test_composition.py > "$OUT/pytest_containment.txt" 2>&1
echo "containment pytest rc=$?"; stamp containment
grep -E "passed|failed|FAILED|Error|assert" "$OUT/pytest_containment.txt" | cut -c1-300 | head -20
grep -E "passed|failed|FAILED|Error|assert" "$OUT/pytest_gpu.txt" | cut -c1-300 | head -20
( timeout ${COMPILED_S:-170} python benchmarks/compiled_audit.py --stages stage3 --out "$OUT/compiled.json" \
    > "$OUT/compiled.log" 2>&1; echo "compiled rc=$?" >> "$OUT/compiled.log" ) &
( timeout ${VALID_S:-170} python benchmarks/run_examples.py --no-bench \
    --only softmax,layernorm,rmsnorm,vector_add,logsumexp,prefix_scan,matmul,cross_entropy,flash_attention \
    --out "$OUT/examples_validation.json" > "$OUT/examples_validation.log" 2>&1; echo "rc=$?" >> "$OUT/examples_validation.log" ) &
wait; stamp compiled_and_validation
cut -c1-260 "$OUT/compiled.log"
cut -c1-400 "$OUT/examples_validation.log" | grep -v "^\s*$" | tail -30
