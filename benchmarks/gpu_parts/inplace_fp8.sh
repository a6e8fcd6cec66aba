# PART=inplace_fp8 (issue 35, branch i35R, ~2 min): fresh copies for in-place entries, and float8e4nv rounding.
# Sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# 1. fp8_gpu: benchmarks/explore/fp8_e4nv_cast.py on CUDA: the GPU's float32 -> float8e4nv of 16 values (carry into
#    the exponent 0.4914, 500 past the max, 464, +-1e6, a subnormal, a tie) against torch's cast clamped to +-448, the
#    rule worker/device/interp_compat.install_fp8_rounding gives the interpreter. Confirms the patch when it prints
#    "gpu vs torch clamped: MATCH" (and fp8_interp, the same values under the interpreter, MATCH too).
# 2. rotary_good / rotary_bad: the probes (worker reproducer, no pydantic needed) on the in-place RoPE fixtures whose
#    q and k are column views of one packed qkv buffer: confirms when rotary_good prints "no probe failed" (rc=0)
#    and rotary_bad prints "FAIL reference" (rc=1), the same as on the CPU.
# 3. naive_softmax: the magnitude probe's NaN at x100 is recorded as "ASIDE magnitude ... (robustness kind extreme)"
#    with rc=0 (no failure), as on the CPU.
run fp8_gpu 60 python3 benchmarks/explore/fp8_e4nv_cast.py
CUDA_VISIBLE_DEVICES="" run fp8_interp 60 python3 benchmarks/explore/fp8_e4nv_cast.py --interp
cd tests/audit_probe_fixtures
run rotary_good 90 python3 -m pytorch_to_triton.worker.probe.probes rotary_inplace_views.py --harness harness_rotary_views.py
run rotary_bad 90 python3 -m pytorch_to_triton.worker.probe.probes rotary_inplace_views_bad.py --harness harness_rotary_views.py
run naive_softmax 90 python3 -m pytorch_to_triton.worker.probe.probes softmax_naive_exp.py --harness harness_softmax_ref.py
cd - > /dev/null
echo "summary: fp8_gpu -> 'MATCH' (rc=0); fp8_interp -> 'MATCH'; rotary_good rc=0 'no probe failed'; rotary_bad rc=1 'FAIL reference'; naive_softmax rc=0 with 'ASIDE magnitude'"
