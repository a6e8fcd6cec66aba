#!/usr/bin/env bash
# The GPU runs of the 2026-12-04 evening session, one PART per device call (each well under 10 minutes):
#   PART=perf     issue 28 (latency, attention round 3, vs_liger subset) + issue 29 (tf32x3 GPU test, tf32 costs,
#                 estimate vs GPU)
#   PART=cluster  issue 27 (gpu_cluster.py: local vs --cluster local, CLI scheduler/worker with CUDA hidden)
#   PART=accept   issues 25, 26, 30 (KernelBench-form corpus and gallery with the two-tier verdict, fault suite,
#                 hostile corpus and sandbox cost, audit probes)
# Planned for the next session with a GPU (the 22:19 session had none lent; each part < 9 minutes):
#   PART=sandbox  issue 30: sandbox_gpu_probe.py (the worker's CUDA-first order, libcuda pinned, torch.compile
#                 confined), then with P2T_SANDBOX=1 the hostile corpus + cost (sandbox_cost.py), the fault suite
#                 and the KernelBench-form corpus verdicts
#   PART=audit    issue 26: every held-out audit batch and the tuned fixtures on CUDA (--check-repro), the H200 column;
#                 AUDIT_SETS="held_out_9 held_out_10 ..." runs a subset (a second call for the sets the first left)
#   PART=trial    issue 29: score_trial.py on benchmarks/trials/2026-12-04 (independent KernelBench-style scoring
#                 + the tool's own validate/bench), estimate_vs_gpu.py; issue 28: latency.py (with
#                 bare_worker_release) and the first call with torch._dynamo deferred
# Wheels from ../shared/tools/gpu-wheels in .whl/ are installed into .site/ (no deps, the image has torch/triton).
# Many small files go into one tarball per part (the device returns 8 files at most).
set -u
source "$(dirname "$0")/gpu_common.sh"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.site:$PWD/server:$PWD
if [ -d .whl ] && [ ! -d .site ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target .site .whl/*.whl \
    > "$OUT/pip.log" 2>&1; stamp "wheels rc=$?"
fi
export PATH=$PWD/.site/bin:$PATH
mkdir -p "$OUT/x"
run() {  # name, limit_s, command...
  local name=$1 lim=$2; shift 2
  OUT="$OUT/x" timeout "$lim" "$@" > "$OUT/x/$name.log" 2>&1; echo "$name rc=$?"; stamp "$name"
  grep -v -i "warn" "$OUT/x/$name.log" | tail -n "${TAIL:-30}" | cut -c1-300
}
case "${PART:-perf}" in
  perf)
    P2T_LATENCY_SETTLE_S=3 run latency 110 python3 benchmarks/latency.py --calls 10
    EXPLORE_BUDGET_S=135 run explore_attention 150 python3 benchmarks/explore_attention.py
    run vs_liger 75 python3 benchmarks/vs_liger.py --only rmsnorm,layernorm,cross_entropy --bench-only --budget-s 60
    run tf32_test 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py -k tf32x3
    run tf32_timing 45 python3 benchmarks/gpu_tf32.py --timing-only
    run estimate_vs_gpu 80 python3 benchmarks/estimate_vs_gpu.py ;;
  cluster)
    run gpu_cluster 330 python3 benchmarks/gpu_cluster.py
    run cluster_overhead 60 python3 benchmarks/cluster_overhead.py --calls 10 --tasks 500 ;;
  accept)
    source benchmarks/gpu_accept.sh ;;
  sandbox)
    export P2T_SANDBOX=1
    run sandbox_probe 120 python3 benchmarks/sandbox_gpu_probe.py
    grep -q "triton kernel under the sandbox: True" "$OUT/x/sandbox_probe.log" || echo "SANDBOX PROBE FAILED: read it first"
    run sandbox_cost 170 python3 benchmarks/sandbox_cost.py --pings 50 --calls 3 --rounds 1
    run faults 100 python3 benchmarks/fault_suite.py --out "$OUT/x/faults"
    run gpu_suite 150 python3 benchmarks/gpu_suite.py --no-bench --budget 130 --redo ;;
  audit)  # one process per set: a set that runs out of time loses only its own figures
    start=$SECONDS
    for set in ${AUDIT_SETS:-$(python3 -c "import json; print(' '.join(sorted({v['set'] for v in json.load(open('tests/audit_public_corpus/probe_labels.json'))['files'].values()})))")}; do
      [ $((SECONDS - start)) -gt 470 ] && { echo "audit_$set: not run (time)"; continue; }
      TAIL=12 run "audit_$set" 90 python3 benchmarks/audit_probe_precision.py --check-repro --only "$set" \
        --json "$OUT/x/audit_$set.json"
    done ;;
  trial)
    run score_trial 300 python3 benchmarks/score_trial.py benchmarks/trials/2026-12-04
    run estimate_vs_gpu 75 python3 benchmarks/estimate_vs_gpu.py
    P2T_LATENCY_SETTLE_S=3 run latency 110 python3 benchmarks/latency.py --calls 10 ;;
esac
tar czf "$OUT/session_${PART:-perf}${ACCEPT:-}.tgz" -C "$OUT/x" . && rm -rf "$OUT/x"
