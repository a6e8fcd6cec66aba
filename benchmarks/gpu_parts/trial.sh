# PART=trial (the 2026-12-04 sessions): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
run score_trial 300 python3 benchmarks/score_trial.py benchmarks/trials/2026-12-04
run estimate_vs_gpu 75 python3 benchmarks/estimate_vs_gpu.py
P2T_LATENCY_SETTLE_S=3 run latency 110 python3 benchmarks/latency.py --calls 10
