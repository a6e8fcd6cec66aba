# PART=liger: sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# Issue 20's acceptance table (~9 minutes): gallery stage 3 vs Liger-Kernel, eager and
# torch.compile (vs_liger.py; VS_ONLY=rope,rmsnorm for a subset), the cached-launch tests, host overhead.
run fastlaunch_test 60 python3 -m pytest -q -p no:cacheprovider tests/test_fastlaunch.py
run vs_liger "${VS_S:-420}" python3 benchmarks/vs_liger.py --budget-s "${VS_BUDGET:-360}" ${VS_ONLY:+--only "$VS_ONLY"}
run host_overhead 60 python3 benchmarks/explore/host_overhead.py
