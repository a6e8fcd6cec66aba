#!/usr/bin/env bash
# Issue 20 on the H200: PART=explore runs the helpers' exploration scripts (EXPLORE="norms glu_rope ..."),
# PART=final3 vs_liger + latency + host_overhead in one call, PART=check gpu_fastpath_check.py + GPU tests + latency, PART=host explore_host.py + a vs_liger subset, PART=final1 attention, latency.py and stage-3 validation on the GPU; PART=final2 the acceptance table (vs_liger.py).
# Everything lands under $OUT; many small files are packed into one tarball (the device returns 8 files at most).
set -u
source "$(dirname "$0")/gpu_common.sh"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.site:$PWD/server:$PWD
mkdir -p "$OUT/x"
run() {  # name, limit_s, command...
  local name=$1 lim=$2; shift 2
  OUT="$OUT/x" timeout "$lim" "$@" > "$OUT/x/$name.log" 2>&1; echo "$name rc=$?"; stamp "$name"
  grep -v -i "warn" "$OUT/x/$name.log" | tail -n "${TAIL:-40}" | cut -c1-400
}
case "${PART:-explore}" in
  explore)
    for e in ${EXPLORE:-attention flce norms glu_rope reductions}; do
      run "explore_$e" "${LIMIT:-200}" python3 "benchmarks/explore_$e.py"
    done ;;
  check)  # the cached launch path on the GPU (every memory-bound stage 3), the GPU tests of this session, latency
    run fastpath_check 200 python3 benchmarks/gpu_fastpath_check.py
    run gpu_tests 120 python3 -m pytest -q -p no:cacheprovider tests/test_fastlaunch.py tests/test_refwatch.py \
        tests/test_memory.py -k "fastlaunch or cached or hooked or watch or cuda_bytes"
    run latency "${LAT_S:-150}" python3 benchmarks/latency.py --calls 10
    run host_overhead 60 python3 benchmarks/host_overhead.py ;;
  final3)  # one call: the acceptance table, the tools' latency, host overhead
    run vs_liger "${VS_S:-390}" python3 benchmarks/vs_liger.py --budget-s "${VS_BUDGET:-320}"
    run latency "${LAT_S:-120}" python3 benchmarks/latency.py --calls 10
    run host_overhead 50 python3 benchmarks/host_overhead.py ;;
  final1)  # attention (its own script times SDPA beside stage 3), the tools' latency, stage 3 validated on the GPU
    run explore_attention "${ATT_S:-200}" python3 benchmarks/explore_attention.py
    run latency "${LAT_S:-130}" python3 benchmarks/latency.py --calls 10
    run validate_stage3 "${VAL_S:-240}" python3 benchmarks/run_examples.py --no-bench --stages stage3.py --trials 1 \
        --only "${ONLY:-cross_entropy,rmsnorm,layernorm,softmax,swiglu,geglu,rope,logsumexp,prefix_scan,fused_linear_cross_entropy,flash_attention}" \
        --out "$OUT/x/validate_stage3.json" ;;
  final2)  # the acceptance table: gallery stage 3 vs Liger-Kernel, eager and torch.compile
    run vs_liger "${VS_S:-540}" python3 benchmarks/vs_liger.py --budget-s "${VS_BUDGET:-420}"
    run fastlaunch_test 60 python3 -m pytest -q -p no:cacheprovider tests/test_fastlaunch.py
    run host_overhead 60 python3 benchmarks/host_overhead.py ;;
  host)  # explore_host.py (host time idle vs busy, inductor code, rmsnorm variants, layernorm split), then vs_liger
    run fastlaunch_test 90 python3 -m pytest -q -p no:cacheprovider tests/test_fastlaunch.py
    run explore_host "${HOST_S:-240}" python3 benchmarks/explore_host.py
    run vs_liger "${VS_S:-300}" python3 benchmarks/vs_liger.py --budget-s "${VS_BUDGET:-200}" --only "${VS_ONLY:-rope,rmsnorm}" ;;
esac
tar czf "$OUT/issue20_${PART:-explore}.tgz" -C "$OUT/x" . && rm -rf "$OUT/x"
