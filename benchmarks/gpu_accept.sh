#!/usr/bin/env bash
# Acceptance on the H200 for issues 25, 26, 29 and 30 (sourced by gpu_session.sh; two device calls of < 9 minutes):
#   ACCEPT=a  issue 25: the tiers' fixtures at full size (gpu_issue25.py), the KernelBench-form corpus verdicts
#             against their labels (gpu_suite.py --no-bench); issue 26: audit probes on the held-out files
#   ACCEPT=b  issue 25 items 3-4: containment (gpu_containment.sh); issue 30: sandbox cost and the hostile corpus
#             on the GPU (sandbox_cost.py); issue 29: the no-GPU estimate against GPU medians
case "${ACCEPT:-a}" in
  a)
    # The sandbox has never run on this machine: if it breaks CUDA here, say so and go on without it
    timeout 90 python3 -m pytorch_to_triton validate examples/softmax/reference.py examples/softmax/stage1.py --json \
      > "$OUT/x/sandbox_smoke.log" 2>&1; rc=$?; echo "sandbox smoke rc=$rc"; stamp sandbox_smoke
    grep -o '"summary": "[^"]*' "$OUT/x/sandbox_smoke.log" | head -1 | cut -c1-300
    grep -o "\"sandbox\": \"[^\"]*\"" "$OUT/x/sandbox_smoke.log" | head -2
    [ $rc -eq 0 ] || { export P2T_SANDBOX=0; echo "SANDBOX OFF for the rest of this part"; }
    run issue25 130 python3 benchmarks/gpu_issue25.py
    run gpu_suite 220 python3 benchmarks/gpu_suite.py --no-bench --budget 180 --redo
    run audit_probes 90 python3 benchmarks/audit_probe_precision.py --only held_out --check-repro ;;
  b)
    CONTAIN_S=120 FAULT_S=100 LAT_S=45 run containment 240 bash benchmarks/gpu_containment.sh
    run sandbox_cost 180 python3 benchmarks/sandbox_cost.py --pings 100 --calls 5 --rounds 2
    run estimate_vs_gpu 75 python3 benchmarks/estimate_vs_gpu.py ;;
esac
