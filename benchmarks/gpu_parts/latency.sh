# PART=latency (issue 47 part 4: a tool call that costs its kernels), ~3 minutes. Sourced by benchmarks/gpu_session.sh.
# 1. latency.py --calls 10 (vector add, 16 case runs per call): the layer table, the worker's start-up steps, then
#      acceptance: warm validation beyond its kernels X ms (...) <= 50 ms: PASS|FAIL
#      acceptance: first call, fresh server, caches kept X s (...) <= 3 s: PASS|FAIL
# 2. fault_suite.py's crash entries (os._exit / segfault / hang on every call, hang with timeout_s=10; the one-case
#    containment entries), each followed by a correct call:
#      acceptance: crash cost <entry>: X s beyond its timeout (...), next call ok in Y s: PASS|FAIL  (<= 10 s)
P2T_LATENCY_SETTLE_S=4 TAIL=70 run latency "${LAT_S:-150}" python3 benchmarks/latency.py --calls 10
TAIL=4 run fault_crash "${FAULT_S:-90}" python3 benchmarks/fault_suite.py --out "$OUT/x/faults" --hang-timeout 10 \
    --only os_exit_every_case,segfault_every_case,hang_every_case,os_exit,segfault,crash_in_one_case,device_assert_in_one_case
echo "=== latency part summary (full: latency.log, latency.json, faults/fault_suite.md)"
grep -E "^acceptance" "$OUT/x/latency.log" "$OUT/x/faults/fault_suite.md" | cut -c1-300
grep -E "^\| (segfault|os_exit|hang|crash|device)" "$OUT/x/faults/fault_suite.md" | cut -c1-240
