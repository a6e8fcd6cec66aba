# PART=perf (RESULTS.md, speed and latency), ~8 minutes. Sourced by benchmarks/gpu_session.sh. Needs liger-kernel in
# .whl/ for the Liger column. latency.py (the tools through the real MCP client); vs_liger.py (every gallery stage 3
# vs Liger, eager and torch.compile; VS_ONLY=rmsnorm,layernorm picks ops, VS_BUDGET the seconds); gpu_tf32.py
# --timing-only (what tf32 / tf32x3 / ieee dots cost here).
P2T_LATENCY_SETTLE_S=3 run latency "${LAT_S:-110}" python3 benchmarks/latency.py --calls 10
run vs_liger "${VS_S:-330}" python3 benchmarks/vs_liger.py --budget-s "${VS_BUDGET:-300}" ${VS_ONLY:+--only "$VS_ONLY"}
run tf32_timing 45 python3 benchmarks/gpu_tf32.py --timing-only
