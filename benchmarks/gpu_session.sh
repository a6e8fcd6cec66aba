#!/usr/bin/env bash
# The one GPU runner: every GPU figure of benchmarks/RESULTS.md comes from a part, benchmarks/gpu_parts/<PART>.sh; one
# device call runs one or several in order (PART="compile sandbox" bash benchmarks/gpu_session.sh; keep it under 10
# minutes: each part's header says how long it takes and how to read it). Wheels in .whl/ (../shared/tools/gpu-wheels)
# go into .site/ (no deps: the image has torch and triton); each part's files go into one tarball (8 files come back).
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$(date +%s)
stamp() { echo "$(( $(date +%s) - T0 ))s $*" | tee -a "$OUT/phases.txt"; }  # a phase timer
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader
  python -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, triton.__version__)"
} 2>&1 | tee "$OUT/gpu.txt"  # the machine record
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/.site:$PWD/server:$PWD
if [ -d .whl ] && [ ! -d .site ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target .site .whl/*.whl \
    > "$OUT/pip.log" 2>&1; stamp "wheels rc=$?"
fi
export PATH=$PWD/.site/bin:$PATH
run() {  # name, limit_s, command...
  local name=$1 lim=$2; shift 2
  OUT="$OUT/x" timeout "$lim" "$@" > "$OUT/x/$name.log" 2>&1; echo "$name rc=$?"; stamp "$name"
  grep -v -i "warn" "$OUT/x/$name.log" | tail -n "${TAIL:-30}" | cut -c1-300
}
for part in ${PART:-perf}; do
  [ -f "benchmarks/gpu_parts/$part.sh" ] || { echo "no part $part: benchmarks/gpu_parts/ has $(ls benchmarks/gpu_parts)"; continue; }
  mkdir -p "$OUT/x"
  ( source "benchmarks/gpu_parts/$part.sh" )
  tar czf "$OUT/session_${part}.tgz" -C "$OUT/x" . && rm -rf "$OUT/x"
done
