#!/usr/bin/env bash
# PART=facts: first call of a GPU session: the facts the session's plans rest on (issues 35-38), ~3 minutes.
# compute-sanitizer over Triton launches (memcheck, racecheck), the C compiler Triton 3.6 resolves for its
# launcher stubs, the H200's own compile of a probe kernel (registers), an ncu look at attention stage 3 vs SDPA.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/server:$PWD
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, triton.__version__)"
  echo "which gcc: $(which gcc cc clang 2>&1 | tr '\n' ' ') CC=${CC:-unset}"
  python3 - <<'PY'
import os, shutil, triton, inspect
print("triton dir", os.path.dirname(triton.__file__))
try:
    from triton.runtime import build
    print("build._build source head:", inspect.getsource(build)[:1500].replace("\n", " | "))
except Exception as e:
    print("build source:", e)
PY
  which compute-sanitizer ncu cuobjdump; compute-sanitizer --version | tail -1
} > "$OUT/facts.txt" 2>&1
cat "$OUT/facts.txt" | cut -c1-400
T=$(date +%s)
timeout 120 compute-sanitizer --tool memcheck python3 benchmarks/explore/sanitizer_probe.py oob > "$OUT/memcheck_oob.log" 2>&1; echo "memcheck oob rc=$? $(( $(date +%s)-T ))s"
grep -m 12 -E "Invalid|at |by thread|ERROR SUMMARY|Address" "$OUT/memcheck_oob.log" | cut -c1-300
T=$(date +%s)
timeout 90 compute-sanitizer --tool memcheck python3 benchmarks/explore/sanitizer_probe.py clean > "$OUT/memcheck_clean.log" 2>&1; echo "memcheck clean rc=$? $(( $(date +%s)-T ))s"; tail -3 "$OUT/memcheck_clean.log"
T=$(date +%s)
timeout 90 compute-sanitizer --tool racecheck python3 benchmarks/explore/sanitizer_probe.py race > "$OUT/racecheck.log" 2>&1; echo "racecheck rc=$? $(( $(date +%s)-T ))s"; grep -m 6 -E "hazard|ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/racecheck.log" | cut -c1-300
python3 benchmarks/explore/sanitizer_probe.py regs 2>&1 | tail -5
T=$(date +%s)
timeout 150 ncu --clock-control none -k regex:"attention_fwd|flash|fmha|cudnn|sm90" --launch-skip 2 --launch-count 2 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section ComputeWorkloadAnalysis \
  python3 benchmarks/explore/sanitizer_probe.py attn > "$OUT/ncu_attn.log" 2>&1; echo "ncu rc=$? $(( $(date +%s)-T ))s"
grep -E "attention_fwd|cudnn|sm90|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued|Issue Slots Busy|Block Limit Reg|Executed Ipc Active" "$OUT/ncu_attn.log" | cut -c1-200 | head -60
