# PART=attn (issue 47 part 1, attention against cuDNN), round 6: sourced by benchmarks/gpu_session.sh (run, stamp,
# $OUT/x set up there). About 3.5 minutes on an H100, 4 at most (compiles included); nothing needs the network.
# benchmarks/attention_sweep.py: B4 H32 S4096 bf16, causal/non-causal x D128/D64; SDPA (cuDNN) and the
# shipped stage 3 timed in the same process (the shipped fwd once more at the end of each combo, "shipped again":
# this run's spread), then stage3.FwdPlan candidates (round 5's bests with emul=4/8/2, exponentials partly on the
# FMA units; lazy=8.0, lazy rescaling; the two-halves kernel at D64 and at BLOCK_N 32) and stage3.BwdPlan
# candidates (round 5's bests with and without emul=4); then fwd+bwd through autograd at the best forward and
# backward plans (round 5's such rows failed: no Triton allocator in autograd's thread; stage 3 sets it now). A
# preflight child runs each TMA plan once first (a deadlocked kernel is skipped, not a hang); every row is checked
# twice against fp32 SDPA before do_bench (L2 flushed, inputs rotated). Rows past EXPLORE_BUDGET_S (after the
# preflight) are skipped, and the part's limit stops the sweep with its summary printed.
EXPLORE_BUDGET_S=160 PREFLIGHT_PLAN_S=40 TAIL=3 run attention_sweep 235 python3 benchmarks/attention_sweep.py
echo "=== attn part summary (full table: attention_sweep.log, attention_sweep.json)"
grep "preflight:" "$OUT/x/attention_sweep.log" | tail -n 1
grep -E "skipped|WRONG|RACE|error:|stopped" "$OUT/x/attention_sweep.log" | grep "^\[" | cut -c1-220 | head -n 12
sed -n '/=== per combo/,$p' "$OUT/x/attention_sweep.log" | cut -c1-260
