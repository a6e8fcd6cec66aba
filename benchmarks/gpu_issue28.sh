#!/usr/bin/env bash
# Issue 28 on the H200, one call of at most ~6 minutes: the tools' latency (first call with the caches kept and
# emptied, warm call, where a warm call's time goes), the attention exploration round 3 (FA3-style forwards against
# SDPA, checked before timed), and vs_liger.py for rmsnorm, layernorm and cross-entropy at their bench shapes.
#   OUT=/some/dir bash benchmarks/gpu_issue28.sh        (the device run sets $OUT)
# Wheels under .whl/ (Liger-Kernel, the MCP SDK, ...) are installed into .site/ first when .site/ is absent.
# Everything lands under $OUT: gpu.txt, phases.txt and one tarball of the logs and JSON.
set -u
source "$(dirname "$0")/gpu_common.sh"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.site:$PWD/server:$PWD
if [ -d .whl ] && [ ! -d .site ]; then
  python3 -m pip install -q --no-index --find-links .whl --target .site .whl/*.whl > "$OUT/pip.log" 2>&1
  stamp "wheels rc=$?"
fi
mkdir -p "$OUT/x"
run() {  # name, limit_s, command...
  local name=$1 lim=$2; shift 2
  OUT="$OUT/x" timeout "$lim" "$@" > "$OUT/x/$name.log" 2>&1; echo "$name rc=$?"; stamp "$name"
  grep -v -i "warn" "$OUT/x/$name.log" | tail -n "${TAIL:-40}" | cut -c1-400
}
P2T_LATENCY_SETTLE_S=${SETTLE_S:-5} run latency "${LAT_S:-120}" python3 benchmarks/latency.py --calls 10
EXPLORE_BUDGET_S=${ATT_BUDGET:-135} run explore_attention "${ATT_S:-150}" python3 benchmarks/explore_attention.py
run vs_liger "${VS_S:-80}" python3 benchmarks/vs_liger.py --only rmsnorm,layernorm,cross_entropy --bench-only \
    --budget-s "${VS_BUDGET:-60}"
tar czf "$OUT/issue28.tgz" -C "$OUT/x" . && rm -rf "$OUT/x"
