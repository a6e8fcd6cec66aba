# PART=sandbox (issue 37: GPU workers confined by default), ~6.5 minutes. Sourced by benchmarks/gpu_session.sh, with
# P2T_SANDBOX unset (the defaults). sandbox_cost.py --no-corpus (on vs off, warm ping and call, the sandbox's own work,
# run_benchmark and a compiled audit confined); then side by side (verdicts, not times) sandbox_cost.py --corpus-only
# (the hostile corpus through the CLI and MCP client), gpu_suite.py (the KernelBench-form corpus against its labels;
# SUITE_BUDGET=S shortens it, a rerun without --redo resumes) and fault_suite.py; then run_examples.py times four
# gallery examples and torch.compile confined. Last, sandbox_cost.py --acceptance: one PASS / FAIL / INCOMPLETE line
# per item of issue 37's list.
unset P2T_SANDBOX
echo "CC=${CC:-unset} gcc=$(command -v gcc) triton=$(python3 -c 'import triton; print(triton.__version__)' 2>&1)"
rm -f .pytorch-to-triton/peaks.json  # measured afresh, inside a confined worker, written by the host
TAIL=20 run sandbox_cost 110 python3 benchmarks/sandbox_cost.py --pings 50 --calls 3 --rounds 1 --no-corpus
( TAIL=14 run sandbox_corpus 180 python3 benchmarks/sandbox_cost.py --corpus-only ) &
( TAIL=14 run gpu_suite $((${SUITE_BUDGET:-200} + 30)) python3 benchmarks/gpu_suite.py --no-bench --budget ${SUITE_BUDGET:-200} --redo ) &
TAIL=14 run faults 170 python3 benchmarks/fault_suite.py --out "$OUT/x/faults" --hang-timeout 5 --budget 140
wait
GALLERY=vector_add,softmax,rmsnorm,layernorm
TAIL=8 run gallery 90 python3 benchmarks/run_examples.py --no-validate --repeats 1 --only $GALLERY \
  --out "$OUT/x/gallery.json"
cp .pytorch-to-triton/peaks.json "$OUT/x/peaks.json" 2>/dev/null  # written by the host, measured by a confined worker
python3 benchmarks/sandbox_cost.py --acceptance "$OUT/x" --fault-limit 170 --gallery $GALLERY | tee "$OUT/x/acceptance.md"
