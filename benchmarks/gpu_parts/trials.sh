# PART=trials (RESULTS.md, validation trust: an assistant's trial stages at full size), ~6 minutes. Sourced by
# benchmarks/gpu_session.sh (run, stamp, $OUT/x set up there). The trial's folders are copied into the workspace
# (.trial/: the tool refuses files outside it), then (1) score_trial.py scores every stage independently (torch and
# triton only: 5 seeds, allclose 1e-2 and 1e-4; median ms vs eager and torch.compile) and (2) the tool's own
# `validate` (its CLI, the GPU's defaults, the problem's full size) runs each problem's stages, one process per problem
# side by side. The row holds when every stage the tool passes also passes the independent scoring (0 false verdicts).
# TRIAL=trials/2026-12-06 (default) picks the trial, TRIAL_ONLY="21_* 47_*" its problems (default: all);
# TRIAL_SCORE=0 skips (1), TRIAL_TOOL=0 skips (2).
TRIAL=${TRIAL:-trials/2026-12-06}
rm -rf .trial && mkdir -p .trial
for g in ${TRIAL_ONLY:-*}; do cp -r "$TRIAL"/$g/ .trial/; done
[ "${TRIAL_SCORE:-1}" = 1 ] && TAIL=30 run score_trial 200 python3 benchmarks/score_trial.py .trial --budget-s 190
[ "${TRIAL_TOOL:-1}" = 0 ] && return 0
for d in .trial/*/; do
  p=$(basename "$d")
  ( t0=$(date +%s)
    timeout "${TRIAL_TOOL_LIMIT:-300}" python3 -m pytorch_to_triton validate "$d"reference.py "$d"stage*.py --json \
      > "$OUT/x/tool_$p.json" 2> "$OUT/x/tool_$p.err"
    echo "$p rc=$? $(( $(date +%s) - t0 )) s" > "$OUT/x/tool_$p.rc" ) &
done
wait; stamp "tool validations done"
python3 - "$OUT/x" <<'PY'
import json, sys
from pathlib import Path
x = Path(sys.argv[1])
print("| problem | stage | ok | contract cases | robustness | verdict |")
print("|---|---|---|---|---|---|")
for f in sorted(x.glob("tool_*.json")):
    rc = (x / (f.stem + ".rc")).read_text().strip() if (x / (f.stem + ".rc")).exists() else "?"
    text = f.read_text(errors="replace")
    i = text.find("{")
    try:
        doc = json.JSONDecoder().raw_decode(text[i:])[0] if i >= 0 else {}
    except ValueError:
        doc = {}
    if not doc:
        err = (x / (f.stem + ".err")).read_text(errors="replace").strip().splitlines()[-3:]
        print(f"| {f.stem[5:]} | - | no result ({rc}) | | | {' / '.join(err)[:200]} |")
        continue
    for c in doc.get("candidates", []):
        cases = c.get("cases", [])
        contract = [k for k in cases if k.get("tier", "contract") == "contract"]
        good = sum(1 for k in contract if k.get("ok"))
        rob = c.get("robustness") or []
        print(f"| {f.stem[5:]} | {Path(str(c.get('candidate', '?'))).name} | {c.get('ok')} | {good}/{len(contract)} "
              f"| {len(rob)} note(s) | {str(c.get('verdict_line', ''))[:110]} |")
    print(f"| {f.stem[5:]} | (call) | {rc} | | | device={doc.get('device')} |")
PY
