# PART=latency (issue 47 part 4, a tool call that costs its kernels): sourced by benchmarks/gpu_session.sh (run,
# stamp, $OUT/x set up there). ~3 minutes.
# 1. benchmarks/latency.py --calls 10 (vector add, 16 case runs per call; real stdio MCP client, Service, WorkerPool,
#    bare in-process worker): prints the layer table, the worker's start-up steps (cuda_init, import_runtime,
#    triton_launch, gc_freeze, ... in s), the pool with the CUDA cache emptied after every call as before, and last:
#      acceptance: warm validation beyond its kernels X ms (...) <= 50 ms: PASS|FAIL
#      acceptance: first call, fresh server, caches kept X s (...) <= 3 s: PASS|FAIL
# 2. benchmarks/fault_suite.py, the crash entries: a candidate that calls os._exit / segfaults / hangs on every call
#    (default cases and trials, hang with timeout_s=10), and the one-case containment entries, each followed by a
#    correct call. Prints per entry:
#      acceptance: crash cost <entry>: X s beyond its timeout (...), next call ok in Y s: PASS|FAIL  (<= 10 s)
P2T_LATENCY_SETTLE_S=4 TAIL=70 run latency "${LAT_S:-150}" python3 benchmarks/latency.py --calls 10
TAIL=4 run fault_crash "${FAULT_S:-90}" python3 benchmarks/fault_suite.py --out "$OUT/x/faults" --hang-timeout 10 \
    --only os_exit_every_case,segfault_every_case,hang_every_case,os_exit,segfault,crash_in_one_case,device_assert_in_one_case
echo "=== latency part summary (full: latency.log, latency.json, faults/fault_suite.md)"
grep -E "^acceptance" "$OUT/x/latency.log" "$OUT/x/faults/fault_suite.md" | cut -c1-300
grep -E "^\| (segfault|os_exit|hang|crash|device)" "$OUT/x/faults/fault_suite.md" | cut -c1-240
