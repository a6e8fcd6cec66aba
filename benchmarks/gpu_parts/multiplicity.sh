# PART=multiplicity (issue 40), ~2-3 minutes. Sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# The "index of a repeated dimension" corpus (tests/multiplicity_corpus) at each problem's full size through
# benchmarks/gpu_suite.py: the tool's verdict and KernelBench's own criterion (5 seeds, both models from one seed,
# allclose 1e-4; "max difference" on a failure) per candidate. Every good.py must pass both, every planted bug (h = bh *
# 0, group / expert / batch offset * 0) fail both: read the per-unit lines and "labels: caught N, pass M" (no
# false_failure, missed or wrong_check).
run multiplicity_gpu 220 python3 benchmarks/gpu_suite.py --corpus tests/multiplicity_corpus --no-bench --redo --budget 190
