# PART=trial_b_tool (issue 40: "0 false verdicts ... the tool's own validation"), ~5 minutes. Sourced by
# benchmarks/gpu_session.sh. The tool's own `validate` (its CLI, the GPU's defaults, the problem's full size) of the
# second trial's stages (benchmarks/trials/2026-12-06/21_*, 47_*), one process per problem side by side (PART=trial_b
# gave its score_trial only 40-47 s for this and never got a verdict). Confirms the bar when every stage's verdict
# is PASS (the independent scorer passed all six on the H100, 2026-12-06 08:09).
mkdir -p .trial_b && cp -r benchmarks/trials/2026-12-06/21_Conv2d_Add_Scale_Sigmoid_GroupNorm \
  benchmarks/trials/2026-12-06/47_NetVladNoGhostClusters .trial_b/  # inside the workspace: the tool refuses files outside it
for p in 21_Conv2d_Add_Scale_Sigmoid_GroupNorm 47_NetVladNoGhostClusters; do
  ( t0=$(date +%s)
    timeout "${TRIAL_TOOL_LIMIT:-300}" python3 -m pytorch_to_triton validate .trial_b/$p/reference.py .trial_b/$p/stage1.py \
      .trial_b/$p/stage2.py .trial_b/$p/stage3.py --json > "$OUT/x/tool_$p.json" 2> "$OUT/x/tool_$p.err"
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
