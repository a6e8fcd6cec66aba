# PART=perf (the 2026-12-04 sessions): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
P2T_LATENCY_SETTLE_S=3 run latency 110 python3 benchmarks/latency.py --calls 10
EXPLORE_BUDGET_S=135 run explore_attention 150 python3 benchmarks/explore/explore_attention.py
run vs_liger 75 python3 benchmarks/vs_liger.py --only rmsnorm,layernorm,cross_entropy --bench-only --budget-s 60
run tf32_test 60 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py -k tf32x3
run tf32_timing 45 python3 benchmarks/gpu_tf32.py --timing-only
run estimate_vs_gpu 80 python3 benchmarks/estimate_vs_gpu.py
