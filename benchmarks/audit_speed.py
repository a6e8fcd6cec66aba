"""How long audit_kernel takes on a ~500-line file with a harness (issue 35, "Speed": < 60 s on CPU, < 20 s on GPU).

The files are public corpus files of that size with their audit harness (tests/audit_public_corpus/probe_labels.json):
lightning_attn/lightning_attn2.py (508 lines, held_out_12) and megablocks/kernels.py (544 lines, held_out_5). Each
is audited through Service.audit (static pass, probes in the worker, compute-sanitizer on a GPU) twice in a fresh
Service: the first call pays the worker's start and Triton's compiles, the second is the warm figure. The device is
the worker's (the CPU interpreter here, the GPU on a CUDA machine).

Run from the repo root: PYTHONPATH=$PWD/server python3 benchmarks/audit_speed.py [--json out.json] [--files F ...]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
FILES = ["tests/audit_public_corpus/lightning_attn/lightning_attn2.py", "tests/audit_public_corpus/megablocks/kernels.py"]
LIMIT_S = {"cpu": 60.0, "cuda": 20.0}  # issue 35's bars


def harness_of(file: str) -> str:
    """The file's audit harness from the probe labels."""
    labels = json.loads((ROOT / "tests" / "audit_public_corpus" / "probe_labels.json").read_text())
    return labels["files"][file]["harness"]


def time_audits(files: list[str]) -> list[dict]:
    """Each file audited twice in one fresh Service: (cold, warm) seconds, device, counts."""
    from pytorch_to_triton.service import Service

    rows = []
    for file in files:
        svc = Service(ROOT)
        try:
            times, rep = [], None
            for _ in range(2):
                t0 = time.monotonic()
                rep = svc.audit(path=file, harness=harness_of(file), compile=False, timeout_s=600)
                times.append(round(time.monotonic() - t0, 1))
        finally:
            svc.close()
        device = next((c.split(" on ")[1].split(";")[0] for c in rep.checked if c.startswith("probes:")), "?")
        sanitizer = next((p for p in rep.probes if p.get("name") == "sanitizer"), None)
        rows.append({"file": file, "lines": len((ROOT / file).read_text().splitlines()), "device": device,
                     "cold_s": times[0], "warm_s": times[1], "counts": {k: rep.counts.get(k, 0) for k in
                                                                        ("P0", "P1", "P2")},
                     "sanitizer": (sanitizer or {}).get("notes", [])})
    return rows


def table(rows: list[dict]) -> str:
    """Markdown: file, lines, device, first and warm call, the issue's bar."""
    out = ["| file | lines | device | first call (s) | warm call (s) | bar | P0/P1/P2 |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        bar = LIMIT_S.get(r["device"], 60.0)
        ok = "meets" if r["warm_s"] < bar and r["cold_s"] < bar else "MISSES"
        c = r["counts"]
        out.append(f"| {r['file'].split('audit_public_corpus/')[-1]} | {r['lines']} | {r['device']} | {r['cold_s']} | "
                   f"{r['warm_s']} | < {bar:.0f} s: {ok} | {c['P0']}/{c['P1']}/{c['P2']} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--files", nargs="+", default=FILES)
    a = ap.parse_args()
    rows = time_audits(a.files)
    text = json.dumps(rows, indent=1)
    if a.json:
        Path(a.json).write_text(text)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], "audit_speed.json").write_text(text)
    for r in rows:
        if r["sanitizer"]:
            print(f"{r['file']}: sanitizer {'; '.join(r['sanitizer'])}")
    print(table(rows))


if __name__ == "__main__":
    main()
