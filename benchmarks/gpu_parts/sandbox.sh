# PART=sandbox (issue 37: GPU workers confined by default), ~6.5 minutes (every limit reached: 510 s). Sourced by
# benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there); P2T_SANDBOX unset: the defaults. Checks, one line each
# at the end (benchmarks/sandbox_cost.py --acceptance: PASS / FAIL / INCOMPLETE):
#   overhead    sandbox_cost.py --no-corpus: sandbox on vs off, warm ping/call, the sandbox's own work per call (< 5 ms),
#               run_benchmark (peaks measured in the confined worker, written by the host) and a compiled audit
#   corpus      sandbox_cost.py --corpus-only: tests/test_sandbox.py, the hostile corpus through the CLI and MCP client
#   faults      fault_suite.py: 0 UNEXPECTED, no entry started past 140 s, record kept if stopped at 170 s
#   gpu_suite   the KernelBench-form corpus, verdicts against labels (200 s budget; `not run` = INCOMPLETE: run the
#               part's gpu_suite line again without --redo; SUITE_BUDGET=S shortens it)
#   gallery     run_examples.py: run_benchmark times four gallery examples' stages and torch.compile, confined
# corpus, faults and gpu_suite run at the same time (verdicts, not times; each its own processes and CUDA contexts).
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
