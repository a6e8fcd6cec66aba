# PART=norms (issue 47 part 2): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there). ~2.5 minutes.
# Needs liger-kernel 0.8.5 in .whl/ for the Liger columns (otherwise they say why not).
# 1. benchmarks/norm_sweep.py: rmsnorm and layernorm (NORM_BUDGET_S seconds shared evenly, default 100), bf16 at
#    8192x8192, 8192x1024, 16384x16384, forward and forward+backward: stage 3 as shipped, torch.compile, Liger, then
#    stage 3 with candidate FWD_PINS / BWD_PINS one at a time. Prints "adopt: <op> FWD_PINS[...] = ..." /
#    "adopt: <op> BWD_PINS[...] = ..." for candidates >= 3 % faster than shipped (copy them into
#    examples/<op>/stage3.py with the numbers), and "acceptance: <op> 8192x8192 fwd+bwd ...: PASS|FAIL"
#    (>= 1.2x torch.compile and >= Liger), shipped and with the adopted pins.
# 2. benchmarks/vs_liger.py --only rmsnorm,layernorm --bench-only: the gallery's table at the bench shape (8192x8192
#    bf16, forward and forward+backward; 3 do_bench repeats per point): "vs liger" and "vs compile" columns.
TAIL=6 run norm_sweep "${NORM_S:-140}" python3 benchmarks/norm_sweep.py --budget-s "${NORM_BUDGET_S:-100}"
TAIL=8 run vs_liger_norms "${VS_S:-80}" python3 benchmarks/vs_liger.py --only rmsnorm,layernorm --bench-only --budget-s 60
echo "=== norms part summary (full tables: norm_sweep.log, vs_liger_norms.log, norm_sweep.json, vs_liger.json)"
sed -n '/=== per op/,$p' "$OUT/x/norm_sweep.log" | cut -c1-220
grep -E "^\| (op|rmsnorm|layernorm) " "$OUT/x/vs_liger_norms.log" | cut -c1-220
