# PART=tolerance (issue 48, ~3 min on an H100): benchmarks/gpu_tolerance.py, the Mamba2 fixture at its KernelBench
# full size. Sourced by benchmarks/gpu_session.sh. Confirms the work when it prints "5/5 rows as expected" (each row:
# ok, verdict, the main case's max abs error beside PyTorch's own).
run tolerance "${TOL_S:-230}" python3 benchmarks/gpu_tolerance.py
