# PART=sandbox (issue 37): sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there). One device call,
# ~6.5 minutes expected (worst case, every limit reached: 510 s), DEFAULT settings with GPU workers confined by
# default: this copy of the tree gets the flip under test (sandbox_host.GPU_CONFINED_BY_DEFAULT = True) unless the
# tree has it already, and P2T_SANDBOX is unset. Checks issue 37's acceptance list, one line each at the end
# (benchmarks/sandbox_acceptance.py: PASS / FAIL / INCOMPLETE):
#   overhead    sandbox_cost.py --no-corpus: sandbox on vs off, warm ping/call, the sandbox's own work per call (< 5 ms),
#               run_benchmark (peaks measured in the confined worker, written by the host) and a compiled audit
#   corpus      sandbox_cost.py --corpus-only: tests/test_sandbox.py, the hostile corpus through the CLI and the MCP
#               client
#   faults      fault_suite.py: 0 UNEXPECTED, no entry started past 140 s, record kept if stopped at 170 s
#   gpu_suite   the KernelBench-form corpus, verdicts against labels (200 s budget, 32 of 43 units took 115 s on the
#               H200 on 2026-12-04; `not run` = INCOMPLETE: run the part's gpu_suite line again without --redo)
#   (corpus, faults and gpu_suite run at the same time: they check verdicts, not times; SUITE_BUDGET=S shortens
#   the suite for a call with little device time left)
#   gallery     run_examples.py: run_benchmark times four gallery examples' stages and torch.compile, confined
F=server/pytorch_to_triton/sandbox_host.py
if grep -q '^GPU_CONFINED_BY_DEFAULT = False' "$F"; then
  sed -i 's/^GPU_CONFINED_BY_DEFAULT = False/GPU_CONFINED_BY_DEFAULT = True/' "$F"
  echo "flip under test: GPU_CONFINED_BY_DEFAULT = True in this copy of $F"
fi
grep -n '^GPU_CONFINED_BY_DEFAULT' "$F"
unset P2T_SANDBOX
echo "CC=${CC:-unset} gcc=$(command -v gcc) triton=$(python3 -c 'import triton; print(triton.__version__)' 2>&1)"
rm -f .pytorch-to-triton/peaks.json  # measured afresh, inside a confined worker, written by the host
TAIL=20 run sandbox_cost 110 python3 benchmarks/sandbox_cost.py --pings 50 --calls 3 --rounds 1 --no-corpus
# Three verdict checks at once (none of them times anything; each in its own processes and CUDA contexts; the
# suite's largest case holds ~22 GB of the GPU): ~3.5 minutes instead of ~6 in a row.
( TAIL=14 run sandbox_corpus 180 python3 benchmarks/sandbox_cost.py --corpus-only ) &
( TAIL=14 run gpu_suite $((${SUITE_BUDGET:-200} + 30)) python3 benchmarks/gpu_suite.py --no-bench --budget ${SUITE_BUDGET:-200} --redo ) &
TAIL=14 run faults 170 python3 benchmarks/fault_suite.py --out "$OUT/x/faults" --hang-timeout 5 --budget 140
wait
GALLERY=vector_add,softmax,rmsnorm,layernorm
TAIL=8 run gallery 90 python3 benchmarks/run_examples.py --no-validate --repeats 1 --only $GALLERY \
  --out "$OUT/x/gallery.json"
cp .pytorch-to-triton/peaks.json "$OUT/x/peaks.json" 2>/dev/null  # written by the host, measured by a confined worker
python3 benchmarks/sandbox_acceptance.py "$OUT/x" --fault-limit 170 --gallery $GALLERY | tee "$OUT/x/acceptance.md"
