# PART=trials (RESULTS.md, validation trust and speed: an assistant's trial stages at full size), ~6 minutes. Sourced by
# benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there). The trial's folders are copied into the workspace
# (.trial/: the tool refuses files outside it), then benchmarks/score_trial.py scores every stage independently (torch
# and triton only: 5 seeds, allclose 1e-2 and 1e-4; median ms vs eager and torch.compile), then runs the tool's own
# `validate` (its CLI, the GPU's defaults, the problem's full size), one process per problem side by side, and prints
# one row per stage: ok, contract cases passed, robustness notes, verdict. The row holds when every stage the tool
# passes also passes the independent scoring (0 false verdicts).
# TRIAL=trials/2026-12-06 (default) picks the trial, TRIAL_ONLY="21_* 47_*" its problems (default: all);
# TRIAL_TOOL=0 skips the tool's validation.
TRIAL=${TRIAL:-trials/2026-12-06}
rm -rf .trial && mkdir -p .trial
for g in ${TRIAL_ONLY:-*}; do cp -r "$TRIAL"/$g/ .trial/; done
TAIL=45 run score_trial 520 python3 benchmarks/score_trial.py .trial --budget-s 190 --tool-limit 300 \
  $([ "${TRIAL_TOOL:-1}" = 0 ] && echo --no-tool)
