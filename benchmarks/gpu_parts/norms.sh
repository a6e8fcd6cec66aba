# PART=norms (issue 47 part 2), ~2.5 minutes. Sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# Needs liger-kernel 0.8.5 in .whl/ for the Liger columns (otherwise they say why not).
# 1. benchmarks/norm_sweep.py (NORM_BUDGET_S, default 100): rmsnorm and layernorm, bf16 at 8192x8192, 8192x1024 and
#    16384x16384, fwd and fwd+bwd: shipped, torch.compile, Liger, candidate FWD_PINS / BWD_PINS; prints "adopt: <op>
#    FWD_PINS[...] = ..." lines (copy into examples/<op>/stage3.py) and "acceptance: <op> 8192x8192 fwd+bwd ...:
#    PASS|FAIL" (>= 1.2x torch.compile and >= Liger); 2. vs_liger.py --bench-only: the gallery's table for both norms.
TAIL=6 run norm_sweep "${NORM_S:-140}" python3 benchmarks/norm_sweep.py --budget-s "${NORM_BUDGET_S:-100}"
TAIL=8 run vs_liger_norms "${VS_S:-80}" python3 benchmarks/vs_liger.py --only rmsnorm,layernorm --bench-only --budget-s 60
echo "=== norms part summary (full tables: norm_sweep.log, vs_liger_norms.log, norm_sweep.json, vs_liger.json)"
sed -n '/=== per op/,$p' "$OUT/x/norm_sweep.log" | cut -c1-220
grep -E "^\| (op|rmsnorm|layernorm) " "$OUT/x/vs_liger_norms.log" | cut -c1-220
