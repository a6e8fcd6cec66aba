# PART=sandbox (the 2026-12-04 sessions): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
export P2T_SANDBOX=1
run sandbox_probe 120 python3 benchmarks/sandbox_gpu_probe.py
grep -q "triton kernel under the sandbox: True" "$OUT/x/sandbox_probe.log" || echo "SANDBOX PROBE FAILED: read it first"
run sandbox_cost 170 python3 benchmarks/sandbox_cost.py --pings 50 --calls 3 --rounds 1
run faults 100 python3 benchmarks/fault_suite.py --out "$OUT/x/faults"
run gpu_suite 150 python3 benchmarks/gpu_suite.py --no-bench --budget 130 --redo
