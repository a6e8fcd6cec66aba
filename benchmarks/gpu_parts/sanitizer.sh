# PART=sanitizer (issue 35, item 3), ~4 minutes: compute-sanitizer over the audit's probes. Sourced by
# benchmarks/gpu_session.sh. 1. facts: where worker/probe/sanitizer.find() found it, and whether this Triton passes
# -lineinfo to ptxas unless TRITON_DISABLE_LINE_INFO=1 (so reports name kernel lines); 2. sanitizer_check.py --group
# fixtures: full audits of the out-of-bounds fixtures and their clean twins. Confirms when ce_ignore_index / ops_abs /
# scale_grad_dense say CONFIRMED or carry a sanitizer_memcheck P0 on the kernel's own line (kernels.py:17 for ops_abs),
# the clean twins show no error, and the sanitizer's seconds stay well under the audit's own.
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
