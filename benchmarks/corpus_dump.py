"""Run every kernel of tests/validation_corpus through run_validation and dump verdicts and findings as JSON
(compared with tests/validation_corpus/labels.json afterwards; used for the H200 run of the corpus).

    python benchmarks/corpus_dump.py --out corpus.json
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


def main(out: str) -> None:
    import torch
    import triton

    svc = Service(ROOT)
    res: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "torch": torch.__version__,
                 "triton": triton.__version__, "kernels": {}}
    try:
        for task in sorted((ROOT / "tests" / "validation_corpus").iterdir()):
            if not (task / "reference.py").is_file():
                continue
            for cand in sorted(task.glob("*.py")):
                if cand.name == "reference.py":
                    continue
                key = f"{task.name}/{cand.name}"
                t0 = time.perf_counter()
                try:
                    rep = svc.validate(reference=str((task / "reference.py").relative_to(ROOT)),
                                       candidates=[str(cand.relative_to(ROOT))], trials=2, timeout_s=120)
                    c = rep.candidates[0]
                    res["kernels"][key] = {"ok": c.ok, "interpreter": rep.interpreter,
                                           "checks": sorted({f.check for f in c.findings}),
                                           "failed_cases": [x.name for x in c.cases if not x.ok][:8],
                                           "s": round(time.perf_counter() - t0, 2)}
                except Exception as e:  # noqa: BLE001
                    res["kernels"][key] = {"error": f"{type(e).__name__}: {e}"[:400]}
                Path(out).write_text(json.dumps(res, indent=2))
    finally:
        svc.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    main(ap.parse_args().out)
