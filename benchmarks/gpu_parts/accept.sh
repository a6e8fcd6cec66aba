# PART=accept: sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# The acceptance of issues 25, 26, 29 and 30 (2026-12-04, two calls of < 9 minutes):
#   ACCEPT=a  issue 25: the tiers' fixtures at full size (gpu_tiers.py), the KernelBench-form corpus
#             verdicts against their labels (gpu_suite.py --no-bench); issue 26: audit probes on held-out files
#   ACCEPT=b  issue 25 items 3-4: containment (PART=containment); issue 30: sandbox cost and the hostile
#             corpus on the GPU (sandbox_cost.py); issue 29: the no-GPU estimate against GPU medians
case "${ACCEPT:-a}" in
  a)
    # The sandbox has never run on this machine: if it breaks CUDA here, say so and go on without it
    timeout 90 python3 -m pytorch_to_triton validate examples/softmax/reference.py examples/softmax/stage1.py --json \
      > "$OUT/x/sandbox_smoke.log" 2>&1; rc=$?; echo "sandbox smoke rc=$rc"; stamp sandbox_smoke
    grep -o '"summary": "[^"]*' "$OUT/x/sandbox_smoke.log" | head -1 | cut -c1-300
    grep -o "\"sandbox\": \"[^\"]*\"" "$OUT/x/sandbox_smoke.log" | head -2
    [ $rc -eq 0 ] || { export P2T_SANDBOX=0; echo "SANDBOX OFF for the rest of this part"; }
    run tiers 130 python3 benchmarks/gpu_tiers.py
    run gpu_suite 220 python3 benchmarks/gpu_suite.py --no-bench --budget 180 --redo
    run audit_probes 90 python3 benchmarks/audit_probe_precision.py --only held_out --check-repro ;;
  b)
    CONTAIN_S=120 FAULT_S=100 LAT_S=45 source benchmarks/gpu_parts/containment.sh
    run sandbox_cost 180 python3 benchmarks/sandbox_cost.py --pings 100 --calls 5 --rounds 2
    run estimate_vs_gpu 75 python3 benchmarks/estimate_vs_gpu.py ;;
esac
