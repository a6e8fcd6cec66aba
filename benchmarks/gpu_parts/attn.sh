# PART=attn (issue 47: attention against cuDNN), 3.5-4 minutes on an H100. Sourced by benchmarks/gpu_session.sh (run,
# stamp, $OUT/x set up there). benchmarks/attention_sweep.py, B4 H32 S4096 bf16, causal/non-causal x D128/D64: SDPA
# (cuDNN) and the shipped stage 3, then the candidate FwdPlan / BwdPlan rows (preflighted in a child: a deadlocked
# TMA plan is skipped), then fwd+bwd at the best plans; rows past EXPLORE_BUDGET_S are skipped, and the part's limit
# stops the sweep with its summary printed. Prints the preflight line, any skipped / WRONG / RACE / error row, then
# per combo SDPA vs shipped vs best (speed-up = SDPA ms / ours) with the "adopt:" lines, and the emul / lazy rows.
EXPLORE_BUDGET_S=160 PREFLIGHT_PLAN_S=40 TAIL=3 run attention_sweep 235 python3 benchmarks/attention_sweep.py
echo "=== attn part summary (full table: attention_sweep.log, attention_sweep.json)"
grep "preflight:" "$OUT/x/attention_sweep.log" | tail -n 1
grep -E "skipped|WRONG|RACE|error:|stopped" "$OUT/x/attention_sweep.log" | grep "^\[" | cut -c1-220 | head -n 12
sed -n '/=== per combo/,$p' "$OUT/x/attention_sweep.log" | cut -c1-260
