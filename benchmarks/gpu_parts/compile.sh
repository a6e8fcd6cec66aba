# PART=compile (issue 36): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there). About 5 minutes.
# 1. compile_agreement: every trial stage, then gallery stages while its 75 s of validations last (trials=1), with
#    each launch's real compile recorded (P2T_DUMP_LAUNCH_SPECS); each launch compiled again by the CPU-side compile
#    (worker/device/target_compile_child.py, this image's Triton 3.6) for sm_90; and the launches a CPU machine recorded
#    and compiled with Triton 3.9 (benchmarks/results/target_compile_cpu_triton39.json) compiled again here.
#    Confirms issue 36 when agree_here is N/N: every launch the GPU made, compiled again by the CPU-side compile
#    with the same Triton, has the same success/failure and registers within +-8 of the GPU's own (45's stage 3
#    FAIL on both sides: a float global, line 91). agree_saved (Triton 3.9's rows vs this Triton's, same
#    specialisations) measured 231/231 same ok and 185/231 registers within 8 between 3.9 and 3.6 on the CPU: expect
#    about that here; all launches must agree on ok.
# 2. score_trial.py on the three trial problems with a 170 s budget under a 180 s limit: it must end by itself,
#    print its table and "skipped:" (what the budget left out), rc=0. SCORE_TRIAL=0 leaves it out (a shorter call).
TAIL=70 run compile_agreement 230 python3 benchmarks/compile_agreement.py --budget-s 75 \
  --against benchmarks/results/target_compile_cpu_triton39.json
[ "${SCORE_TRIAL:-1}" = 1 ] && TAIL=20 run score_trial 180 python3 benchmarks/score_trial.py benchmarks/trials/2026-12-04 --budget-s 170
grep -h -E "^agree_|^launches|^total|skipped" "$OUT/x/compile_agreement.log" "$OUT/x/score_trial.log" | cut -c1-300
