# Sourced by benchmarks/gpu_*.sh: the output folder, a phase timer, and the machine record (gpu.txt).
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$(date +%s)
stamp() { echo "$(( $(date +%s) - T0 ))s $*" | tee -a "$OUT/phases.txt"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,memory.total --format=csv,noheader
  python -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, torch.version.cuda, triton.__version__)"
} 2>&1 | tee "$OUT/gpu.txt"
