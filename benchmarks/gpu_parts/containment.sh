# PART=containment: sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# Issue 25 items 3-4, issue 29 item 3 (~4 minutes): a device-side assert in a candidate's
# case and in a reference's case is contained (GPU tests, fault-suite entries with the follow-up call's
# result), Triton's share of the GPU time, the warm validate latency with per-case events.
run containment_pytest "${CONTAIN_S:-150}" python3 -m pytest -q -ra -p no:cacheprovider --timeout 140 -m gpu \
    tests/test_containment.py tests/test_composition.py
run faults "${FAULT_S:-120}" python3 benchmarks/fault_suite.py --out "$OUT/x/faults" --only \
    crash_in_one_case,reference_crash_in_one_case,device_assert_in_one_case,reference_device_assert,device_assert,os_exit
sed -n '/^|/p;/next call failed/p' "$OUT/x/faults/fault_suite.md" 2>/dev/null | cut -c1-260 | head -30
run latency "${LAT_S:-60}" python3 benchmarks/latency.py --calls 10 --layer bare --out "$OUT/x/latency.json"
