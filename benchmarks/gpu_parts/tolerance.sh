# PART=tolerance (issue 48, branch h48, ~3 min on an H100): the Mamba2 fixture (KernelBench L3 48_Mamba2ReturnY,
# tests/tolerance_fixtures/mamba2) validated at its KernelBench full size (2048 x 128 x 8 x 64: 134 M outputs up to
# ~1e22). Sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# Confirms the work when it prints "5/5 rows as expected": stage1 passes (undeclared, and with issue 48's declared
# atol 1.07e10 plus the one-line note that it sits below PyTorch's own error; --sizes equal to the full size reported
# as the full size), the two planted bugs fail with mismatch, no stale_result anywhere, and a [sizes] pin is named in
# the verdict line. Each row prints the main case's max abs error beside PyTorch's own (reference_own_max_abs_err).
run tolerance "${TOL_S:-230}" python3 benchmarks/gpu_tolerance.py
