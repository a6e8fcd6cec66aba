"""Issue 40 on the GPU: the "index of a repeated dimension" corpus (tests/multiplicity_corpus) at each problem's
FULL size, scored independently of the tool (torch + triton only: Model and ModelNew built from one seed, the
reference's weights loaded into ModelNew, get_inputs() on CUDA, 3 seeds, allclose at KernelBench's 1e-2 and at
fp32's 1e-4), then, with --tool, the tool's own run_validation of every candidate on the GPU (full size first).

    PYTHONPATH=$PWD/.site:$PWD/server python3 benchmarks/multiplicity_gpu.py [--tool]

What confirms the work: every good.py passes at both tolerances (so the stages that passed on CPU are right at full
size, and they compile under Triton 3.6), every planted bug fails at both (so the labels the CPU test relies on
are true), and with --tool the tool's verdicts equal the labels. JSON: $OUT/multiplicity_gpu.json.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "multiplicity_corpus"
LABELS = json.loads((CORPUS / "labels.json").read_text())
OUT = Path(os.environ.get("OUT") or "/tmp/out")


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def independent(problem: str, cand: str) -> dict:
    ref = _load(CORPUS / problem / "reference.py", f"ref_{problem}")
    new = _load(CORPUS / problem / cand, f"cand_{problem}_{Path(cand).stem}")
    init = list(ref.get_init_inputs())
    torch.manual_seed(0)
    model = ref.Model(*init).cuda().eval()
    torch.manual_seed(0)
    mine = new.ModelNew(*init).cuda().eval()
    mine.load_state_dict(model.state_dict())
    worst, ok2, ok4 = 0.0, True, True
    t0 = time.perf_counter()
    try:
        for seed in range(3):
            torch.manual_seed(seed)
            with torch.device("cuda"):
                xs = list(ref.get_inputs())
            with torch.no_grad():
                want, got = model(*xs), mine(*xs)
            torch.cuda.synchronize()
            worst = max(worst, float((want - got).abs().max()))
            ok2 &= bool(torch.allclose(got, want, atol=1e-2, rtol=1e-2))
            ok4 &= bool(torch.allclose(got, want, atol=1e-4, rtol=1e-4))
        err = None
    except Exception as e:  # noqa: BLE001 - a compile or launch failure on this Triton is a row, not a crash
        err, ok2, ok4 = f"{type(e).__name__}: {str(e)[:200]}", False, False
    return {"max_abs_err": worst, "pass_1e-2": ok2, "pass_1e-4": ok4, "error": err,
            "seconds": round(time.perf_counter() - t0, 2)}


def tool_verdicts() -> dict[str, bool]:
    from pytorch_to_triton.service import Service

    out: dict[str, bool] = {}
    svc = Service(ROOT)
    try:
        for problem in sorted({k.split("/")[0] for k in LABELS}):
            names = sorted(k for k in LABELS if k.startswith(problem + "/"))
            rel = CORPUS.relative_to(ROOT) / problem
            rep = svc.validate(reference=str(rel / "reference.py"), candidates=[str(rel / Path(n).name) for n in names],
                               trials=1, timeout_s=300)
            for name in names:
                out[name] = next(c.ok for c in rep.candidates if c.candidate.endswith(name))
    finally:
        svc.close()
    return out


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    for key, label in sorted(LABELS.items()):
        problem, cand = key.split("/")
        r = independent(problem, cand)
        r.update(candidate=key, expect=label["expect"])
        r["agrees"] = (r["pass_1e-2"] and r["pass_1e-4"]) if label["expect"] == "pass" else \
            (not r["pass_1e-2"] and not r["pass_1e-4"])
        rows.append(r)
        torch.cuda.empty_cache()
    tool = tool_verdicts() if "--tool" in sys.argv else {}
    for r in rows:
        if r["candidate"] in tool:
            r["tool_ok"] = tool[r["candidate"]]
            r["tool_agrees"] = r["tool_ok"] == (r["expect"] == "pass")
    (OUT / "multiplicity_gpu.json").write_text(json.dumps(rows, indent=2))
    print(f"{'candidate':<40}{'expect':>7}{'max|err|':>11}{'1e-2':>6}{'1e-4':>6}{'agrees':>8}{'tool':>6}  error")
    for r in rows:
        tool_col = "" if "tool_ok" not in r else ("pass" if r["tool_ok"] else "fail")
        print(f"{r['candidate']:<40}{r['expect']:>7}{r['max_abs_err']:>11.3g}{str(r['pass_1e-2'])[0]:>6}"
              f"{str(r['pass_1e-4'])[0]:>6}{str(r['agrees']):>8}{tool_col:>6}  {r['error'] or ''}")
    ok = all(r["agrees"] for r in rows) and all(r.get("tool_agrees", True) for r in rows)
    print(f"\nall labels confirmed at full size on {torch.cuda.get_device_name(0)}: {ok}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
