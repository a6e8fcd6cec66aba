# PART=trial_b (issues 40 and 36, 2026-12-06 second session; ~6 minutes). Sourced by benchmarks/gpu_session.sh.
# 1. The gallery's swiglu/geglu stage 3 (their _FastLaunch skips JITFunction.run) validate with their launches
#    counted: tests/test_gpu.py::test_compiled_launcher_launches_are_counted must pass (2 passed).
# 2. Issue 40's second trial (benchmarks/trials/2026-12-06: 21_Conv2d_Add_Scale_Sigmoid_GroupNorm,
#    47_NetVladNoGhostClusters) scored at full size: independent KernelBench-style correctness (5 seeds, 1e-2 and
#    1e-4) and the tool's own validation of the same files; 0 false verdicts = every stage the tool passed on the
#    CPU passes both here.
[ "${TRIAL_B_TEST:-1}" = 1 ] && TAIL=6 run gpu_fastlaunch 90 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_gpu.py -k compiled_launcher
mkdir -p .trial_b && cp -r benchmarks/trials/2026-12-06/21_Conv2d_Add_Scale_Sigmoid_GroupNorm \
  benchmarks/trials/2026-12-06/47_NetVladNoGhostClusters .trial_b/  # inside the workspace: the tool refuses files outside it
TAIL=30 run score_trial_b ${TRIAL_B_LIMIT:-240} python3 benchmarks/score_trial.py .trial_b --budget-s ${TRIAL_B_BUDGET:-230}
