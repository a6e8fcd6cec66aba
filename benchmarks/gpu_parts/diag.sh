# PART=diag (2026-12-06 second session, ~3 minutes): why did examples/geglu/stage3.py and examples/swiglu/stage3.py
# FAIL on the H100 in PART=agree_all (07:00 UTC, within 1 s, with the launch dump on and P2T_SANDBOX=0), and why
# did examples/matmul/stage3.py and trial 50's stage 3 end with an empty verdict? Each validated by the CLI, once
# as a user runs it (default: confined) and once as compile_agreement did (dump on, unconfined): the full text
# report and the JSON go to $OUT/x. Then trial 45's stage 3 with both float globals made constexpr (must pass).
D=$OUT/x
for s in geglu swiglu matmul; do
  TAIL=25 run diag_$s 80 python3 -m pytorch_to_triton.cli validate examples/$s/reference.py examples/$s/stage3.py --trials 1
  mkdir -p /tmp/dump_$s
  P2T_DUMP_LAUNCH_SPECS=/tmp/dump_$s P2T_SANDBOX=0 TAIL=25 run diag_${s}_dump 80 python3 -m pytorch_to_triton.cli \
    validate examples/$s/reference.py examples/$s/stage3.py --trials 1 --json
done
T=benchmarks/trials/2026-12-04/50_ReLUSelfAttention
TAIL=25 run diag_t50 90 python3 -m pytorch_to_triton.cli validate $T/reference.py $T/stage3.py --trials 1
F=benchmarks/explore/trial45_fixed/45_Gemm_Sigmoid_LogSumExp
TAIL=15 run diag_fixed45 120 python3 benchmarks/score_trial.py benchmarks/explore/trial45_fixed --budget-s 110
