"""Compiled analysis of every example stage on a GPU: audit_kernel with a reference, one line per kernel.

    python benchmarks/compiled_audit.py --out compiled.json [--only softmax,matmul] [--stages stage3]

Prints registers, spills, shared memory, warps/stages, occupancy, vectorized global loads and stores, and
wgmma/mma counts per compiled kernel, plus every compiled finding (register_spills, low_occupancy, ...).
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

KEYS = ("n_regs", "n_spills", "shared", "num_warps", "num_stages", "occupancy", "limited_by", "global_loads",
        "vectorized_loads", "global_stores", "vectorized_stores", "wgmma", "mma", "tma_loads")


def main(only: list[str] | None, stages: list[str], out: str | None) -> None:
    svc = Service(ROOT)
    results: dict = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "files": {}}
    try:
        folders = [ROOT / "examples" / n for n in only] if only else sorted((ROOT / "examples").iterdir())
        for ex in folders:
            for stage in stages:
                path = ex / f"{stage}.py"
                if not path.is_file():
                    continue
                rel = str(path.relative_to(ROOT))
                try:
                    r = svc.audit(path=rel, reference=str((ex / "reference.py").relative_to(ROOT)), timeout_s=240)
                except Exception as e:  # noqa: BLE001 - record and go on
                    results["files"][rel] = {"error": f"{type(e).__name__}: {e}"}
                    print(f"{rel}: ERROR {type(e).__name__}: {e}", flush=True)
                    continue
                kernels = [{k: c.get("facts", {}).get(k) for k in ("kernel", *KEYS)} for c in r.compiled]
                results["files"][rel] = {"verdict": r.verdict, "counts": r.counts, "kernels": kernels,
                                         "findings": [(f["severity"], f["id"], f.get("line"), f.get("evidence", "")[:80])
                                                      for f in r.findings],
                                         "not_checked": r.not_checked}
                print(f"{rel}: {r.verdict} {r.counts} not_checked={r.not_checked}", flush=True)
                for k in kernels:
                    print("   " + " ".join(f"{key}={k.get(key)}" for key in ("kernel", *KEYS)), flush=True)
                for f in r.findings:
                    if f["id"] in ("register_spills", "low_occupancy", "unvectorized_loads", "no_wgmma"):
                        print(f"   ! {f['severity']} {f['id']}: {f.get('evidence', '')[:100]}", flush=True)
                if out:
                    Path(out).write_text(json.dumps(results, indent=2, default=str))
    finally:
        svc.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--only")
    ap.add_argument("--stages", default="stage1,stage2,stage3")
    ap.add_argument("--out")
    a = ap.parse_args()
    main(a.only.split(",") if a.only else None, a.stages.split(","), a.out)
