# PART=attn (issue 47 part 1, attention against cuDNN): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set
# up there). About 4-5.5 minutes on an H100 (compiles included); nothing needs the network.
# 1. benchmarks/explore/attention_ws_repro.py on this machine's Triton (a CPU compile for sm_90, ~20 s): which
#    shapes of kernel Triton's Hopper warp specialization accepts (round 4's causal kernel aborted in it).
# 2. benchmarks/explore/attention_sweep.py: B4 H32 S4096 bf16, causal/non-causal x D128/D64; SDPA (cuDNN) and the
#    shipped stage 3 timed in the same process, then stage3.FwdPlan candidates (TMA + warp specialization at
#    num_warps=4: producer + 2 consumer warpgroups; round 4's pointer / two-halves winners) and stage3.BwdPlan
#    candidates (the descriptor dK/dV kernel warp-specialized, plain, with dQ fused through TMA reduces or vector
#    atomics); a preflight child runs each TMA plan once first (a deadlocked kernel is skipped, not a hang; 60 s at
#    most each); each checked twice against fp32 SDPA before do_bench (L2 flushed, inputs rotated). Prints per combo
#    SDPA vs shipped vs best, "adopt: FWD_PLANS[...] = ..." / "adopt: BWD_PLANS[...] = ..." lines for stage3's
#    tables, and per warp-specialized row the TTGIR facts (ttg.warp_specialize, total warps, setmaxnreg).
TAIL=8 run attention_ws_repro 90 python3 benchmarks/explore/attention_ws_repro.py
EXPLORE_BUDGET_S=200 TAIL=3 run attention_sweep 400 python3 benchmarks/explore/attention_sweep.py
echo "=== attn part summary (full tables: attention_sweep.log, attention_sweep.json, attention_ws_repro.log)"
grep "preflight:" "$OUT/x/attention_sweep.log" | tail -n 1
grep -E "skipped: preflight|WRONG|RACE|error:" "$OUT/x/attention_sweep.log" | grep "^\[" | cut -c1-220 | head -n 12
sed -n '/=== per combo/,$p' "$OUT/x/attention_sweep.log" | cut -c1-220
