#!/usr/bin/env bash
# Issue 25 items 3-4 and issue 29 item 3 on a GPU (correctness, plus the warm-call cost): a device-side assert in a
# candidate's case and in a reference's case is contained (GPU tests and fault-suite entries, with the follow-up
# call's result), Triton's share of the GPU time is measured, and the warm validate latency with per-case events.
# One command, about 4 minutes on an H200; writes under $OUT.
set -u
source "$(dirname "$0")/gpu_common.sh"
stamp start
timeout ${CONTAIN_S:-150} python -m pytest -q -ra -p no:cacheprovider --timeout 140 -m gpu tests/test_containment.py \
    tests/test_composition.py > "$OUT/pytest_containment.txt" 2>&1
echo "containment pytest rc=$?"; stamp pytest
grep -E "passed|failed|FAILED|Error|assert" "$OUT/pytest_containment.txt" | cut -c1-300 | head -20
timeout ${FAULT_S:-120} python benchmarks/fault_suite.py --out "$OUT/faults" --only \
    crash_in_one_case,reference_crash_in_one_case,device_assert_in_one_case,reference_device_assert,device_assert,os_exit \
    > "$OUT/faults.log" 2>&1
echo "fault_suite rc=$?"; stamp faults
sed -n '/^|/p;/next call failed/p' "$OUT/faults/fault_suite.md" 2>/dev/null | cut -c1-260 | head -30
timeout ${LAT_S:-60} python benchmarks/latency.py --calls 10 --layer bare --out "$OUT/latency.json" > "$OUT/latency.log" 2>&1
echo "latency rc=$?"; stamp latency
tail -5 "$OUT/latency.log" | cut -c1-300
