# PART=sanitizer (issue 35, item 3), ~4 minutes: compute-sanitizer over the audit probes on the GPU. Sourced by
# benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there). Needs pydantic/mcp from .whl (as PART=audit).
# 1. facts: the sanitizer found where worker/probe/sanitizer.find() looks, and whether this Triton passes -lineinfo to ptxas
#    unless TRITON_DISABLE_LINE_INFO=1 (the compiler's own lines are printed), so its reports name kernel lines;
# 2. the fixtures (an out-of-bounds bug each, beside a clean twin): full audits, the worker's sanitizer after the
#    probes; each P0 claiming an out-of-bounds access with the sanitizer's verdict, the seconds the sanitizer took;
# 3. PART=sanitizer_heldout does the held-out files (the CPU's claims, memcheck only) and the 500-line speed audit.
# Confirms item 3 when: ce_ignore_index / ops_abs / scale_grad_dense rows say CONFIRMED or carry a sanitizer_memcheck
# P0 on the kernel's own line (kernels.py:17 for ops_abs), the clean twins (ce_good, ops_good) show no error, and the
# sanitizer seconds per file stay well under the audit's own.
python3 - <<'PY' 2>&1 | tee "$OUT/x/sanitizer_facts.txt"
import inspect, os
from pytorch_to_triton.worker.probe import sanitizer
print("compute-sanitizer:", sanitizer.find())
from triton.backends.nvidia import compiler
src = inspect.getsource(compiler)
print("TRITON_DISABLE_LINE_INFO in this environment:", os.environ.get("TRITON_DISABLE_LINE_INFO"))
for n, line in enumerate(src.splitlines(), 1):
    if "lineinfo" in line or "line_info" in line:
        print(f"compiler.py:{n}: {line.strip()[:150]}")
PY
TAIL=40 run sanitizer_fixtures 230 python3 benchmarks/sanitizer_check.py --group fixtures --budget 170 \
  --json "$OUT/x/sanitizer_fixtures.json"
