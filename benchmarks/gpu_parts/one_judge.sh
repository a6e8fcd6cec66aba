# PART=one_judge (issue 45, ~3 min): audit --reference is run_validation's verdict, and no slower than validate + 50 %.
# Sourced by benchmarks/gpu_session.sh. benchmarks/audit_speed.py --vs-validate on tests/audit_validate_fixtures (the
# issue's false P0s and misses), three validation-corpus candidates and two KernelBench-form units. Read the table:
# "validate" fail <=> "audit P0" > 0 on every row (the one judge); the last line's total ratio must read "meets".
F=tests/audit_validate_fixtures; V=tests/validation_corpus; K=tests/kernelbench_corpus
TAIL=20 run one_judge 200 python3 benchmarks/audit_speed.py --vs-validate --json "$OUT/x/one_judge.json" --pairs \
  $F/vector_add/reference.py:$F/vector_add/good.py \
  $F/causal_attention/reference.py:$F/causal_attention/good.py \
  $F/conv_epilogue/reference.py:$F/conv_epilogue/good.py \
  $F/conv_epilogue/reference.py:$F/conv_epilogue/plane_offset.py \
  $V/softmax/reference.py:$V/softmax/good.py \
  $V/elementwise/reference.py:$V/elementwise/off_by_one.py \
  $V/row_mean/reference.py:$V/row_mean/race_split_rmw.py \
  $K/softplus/reference.py:$K/softplus/tail_floor_grid.py \
  $K/swish/reference.py:$K/swish/stride_flat.py
echo "summary: one_judge -> every row: validate fail <=> audit P0 > 0; last line 'meets'"
