# PART=norms (issue 47 part 2), ~2.5 minutes. Sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# Needs liger-kernel 0.8.5 in .whl/ for the Liger columns (otherwise they say why not).
# benchmarks/norm_sweep.py (NORM_BUDGET_S, default 100): rmsnorm and layernorm, bf16 at 8192x8192, 8192x1024 and
#  16384x16384, fwd and fwd+bwd: shipped, torch.compile, Liger, candidate FWD_PINS / BWD_PINS; prints "adopt: <op>
#    FWD_PINS[...] = ..." lines (copy into examples/<op>/stage3.py) and "acceptance: <op> 8192x8192 fwd+bwd ...:
#    PASS|FAIL" (>= 1.2x torch.compile and >= Liger), shipped and with the adopted pins.
TAIL=6 run norm_sweep "${NORM_S:-140}" python3 benchmarks/norm_sweep.py --budget-s "${NORM_BUDGET_S:-100}"
echo "=== norms part summary (full table: norm_sweep.log, norm_sweep.json)"
sed -n '/=== per op/,$p' "$OUT/x/norm_sweep.log" | cut -c1-220
