# PART=restructure: sourced by benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there).
# Issue 39, ~4 minutes: the worker split into subpackages (device/, confine/, validation/, benchmark/, probe/) and
# its long files split (docs/restructure/split.py: probes.py's mixins, bench.py's peaks.py, validate.py's output
# checks and gradients) change no behaviour on the GPU. Runs on either layout (the flat worker/ of before, or the
# subpackages of after), so one call can run it on both trees and the two summaries are compared line by line:
# every worker module imports under Triton 3.6; validate, bench and audit (compiled facts) of softmax stage 3
# through the CLI; validate of layernorm stage 3 with its gradients (Validator.run_gradients); a probe reproducer
# by its `python -m` module; tests/test_gpu.py. Timings are printed for the eye (they are noise between runs),
# verdicts, counts and registers must match. Needs pydantic/mcp from .whl (the CLI; as PART=audit).
# (the flat names are spelled through $W and $P so that the restructure's rewrite of old paths leaves them be)
W=server/pytorch_to_triton/worker P=probes
if [ -f "$W/$P.py" ]; then LAYOUT=flat; PROBES=pytorch_to_triton.worker.$P
else LAYOUT=rooms; PROBES=pytorch_to_triton.worker.probe.probes; fi
echo "layout: $LAYOUT"
run imports 90 python3 -c "
import importlib, pathlib
mods = sorted('.'.join(p.relative_to('server').with_suffix('').parts).removesuffix('.__init__')
              for p in pathlib.Path('server/pytorch_to_triton/worker').rglob('*.py') if p.name != '__main__.py')
for m in mods:
    importlib.import_module(m)
print('imported', len(mods), 'worker modules')"
TAIL=3 run validate 90 python3 -m pytorch_to_triton validate examples/softmax/reference.py examples/softmax/stage3.py --json -q
TAIL=3 run validate_grad 90 python3 -m pytorch_to_triton validate examples/layernorm/reference.py \
    examples/layernorm/stage3.py --json -q
TAIL=3 run bench 120 python3 -m pytorch_to_triton bench examples/softmax/reference.py examples/softmax/stage3.py --json -q
TAIL=3 run audit 90 python3 -m pytorch_to_triton audit examples/softmax/stage3.py --reference examples/softmax/reference.py \
    --json -q
# a P0 of the 2026-12-04 held-out run (benchmarks/results/audit_probe_precision_h200_2026-12-04_2056.json): rc 1
run probe 90 python3 -m "$PROBES" tests/audit_public_corpus/deepspeed/residual_add.py \
    --harness tests/audit_public_harnesses/deepspeed/residual_add.py --only 'layout: transposed'
run test_gpu 150 python3 -m pytest -q -p no:cacheprovider --timeout 140 -m gpu tests/test_gpu.py
python3 - "$OUT/x" "$LAYOUT" <<'PY'
import json, re, sys
from pathlib import Path
x, layout = Path(sys.argv[1]), sys.argv[2]
def doc(name):
    text = (x / f"{name}.log").read_text(errors="replace") if (x / f"{name}.log").exists() else ""
    i = text.find("{")
    try:
        return json.JSONDecoder().raw_decode(text[i:])[0] if i >= 0 else {}
    except ValueError:
        return {}
def tail(name, n=1):
    p = x / f"{name}.log"
    return " | ".join(p.read_text(errors="replace").strip().splitlines()[-n:])[:160] if p.exists() else "no log"
rows = [("imports", tail("imports"))]
v = doc("validate")
rows.append(("validate", f"ok={v.get('ok')} interpreter={v.get('interpreter')} verdict={str(v.get('verdict'))[:90]!r}"))
g = doc("validate_grad")
grads = sum(1 for c in (g.get("candidates") or [{}])[0].get("cases", []) if str(c.get("name", "")).endswith(":grad"))
rows.append(("grad", f"ok={g.get('ok')} gradient cases={grads} verdict={str(g.get('verdict'))[:70]!r}"))
b = doc("bench")
times = [(t.get("impl"), t.get("case"), t.get("ok"), t.get("median_ms")) for t in b.get("timings", [])]
rows.append(("bench", f"ok={b.get('ok')} device={b.get('device')} timings (impl, case, ok, median ms; medians are "
                      f"noise)={times[:8]}"))
a = doc("audit")
regs = sorted((str(k.get("kernel")), k.get("n_regs"), k.get("n_spills")) for k in a.get("compiled", []))
rows.append(("audit", f"counts={a.get('counts')} compiled (kernel, registers, spills)={regs}"))
pl = (x / "probe.log").read_text(errors="replace") if (x / "probe.log").exists() else ""
rows.append(("probe", f"{'FAIL reproduced' if re.search(r'fail', pl, re.I) else 'no failure'}: {tail('probe')}"))
rows.append(("test_gpu", tail("test_gpu")))
print(f"\nRESTRUCTURE CHECK ({layout} layout); expected: imports all, validate ok=True, grad ok=True with gradient "
      "cases > 0, bench ok=True with rows, "
      "audit compiled facts per kernel, probe FAIL reproduced (rc 1), test_gpu all passed")
for name, what in rows:
    print(f"{name:<9} {what}")
PY
