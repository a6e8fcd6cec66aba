"""Validate and benchmark every example's stages with our own tools (the gallery's numbers).

    python benchmarks/run_examples.py [--only softmax,matmul] [--no-bench] --out examples.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from pytorch_to_triton.service import Service  # noqa: E402


class _Skip(Exception):
    pass


def main(only: list[str] | None, bench: bool, out: str | None, repeats: int, validate: bool = True,
         trials: int = 2) -> None:
    svc = Service(ROOT)
    results: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "examples": {}}
    try:
        folders = sorted((ROOT / "examples").iterdir())
        if only:  # in the order given, so the most important ones finish first under a time limit
            folders = [ROOT / "examples" / n for n in only]
        for ex in folders:
            if not (ex / "reference.py").is_file():
                continue
            stages = sorted(str(p.relative_to(ROOT)) for p in ex.glob("stage*.py"))
            ref = str((ex / "reference.py").relative_to(ROOT))
            entry: dict = {}
            t0 = time.perf_counter()
            # Gradients are requested for examples whose reference declares GRAD_INPUTS; forward-only stages
            # say SUPPORTS_BACKWARD = False and are skipped with a note by the validator.
            grads = "GRAD_INPUTS" in (ex / "reference.py").read_text()
            try:
                if not validate:
                    raise _Skip
                v = svc.validate(reference=ref, candidates=stages, trials=trials, gradients=grads, timeout_s=400)
                entry["validation"] = {c.candidate: {"ok": c.ok, "cases": len(c.cases),
                                                     "findings": [f"{f.severity}:{f.check}:{f.message[:160]}"
                                                                  for f in c.findings]} for c in v.candidates}
            except _Skip:
                pass
            except Exception as e:  # noqa: BLE001 - record and go on to the next example
                entry["validation_error"] = f"{type(e).__name__}: {e}"
            entry["validation_s"] = round(time.perf_counter() - t0, 1)
            if bench:
                try:
                    b = svc.benchmark(reference=ref, candidates=stages, repeats=repeats, timeout_s=500)
                    entry["benchmark"] = {"summary": b.summary, "verdict": b.verdict, "environment": b.environment,
                                          "runtime": b.runtime,
                                          "peaks": b.peaks, "timings": [t.model_dump(mode="json", exclude={"autotune"})
                                                                        for t in b.timings],
                                          "autotune": {t.impl: t.autotune for t in b.timings if t.autotune}}
                except Exception as e:  # noqa: BLE001
                    entry["benchmark_error"] = f"{type(e).__name__}: {e}"
            results["examples"][ex.name] = entry
            print(f"== {ex.name}: {json.dumps(entry.get('validation', entry.get('validation_error')))[:600]}",
                  flush=True)
            if "benchmark" in entry:
                print(entry["benchmark"]["summary"], flush=True)
            if out:
                Path(out).write_text(json.dumps(results, indent=2, default=str))
    finally:
        svc.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--no-validate", action="store_true", help="benchmark only (it re-validates on its inputs)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--trials", type=int, default=2, help="seeded trials per validation case")
    ap.add_argument("--out")
    a = ap.parse_args()
    main(a.only.split(",") if a.only else None, not a.no_bench, a.out, a.repeats, not a.no_validate, a.trials)
