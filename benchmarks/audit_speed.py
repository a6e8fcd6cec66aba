"""How long audit_kernel takes (issue 35: a ~500-line file with a harness, < 60 s on CPU, < 20 s on a GPU), and audit
--reference against validate on the same files (issue 45: no slower than validate + 50 %).

    PYTHONPATH=$PWD/server python3 benchmarks/audit_speed.py [--files F ...] [--json out.json]
    PYTHONPATH=$PWD/server python3 benchmarks/audit_speed.py --vs-validate [--pairs REFERENCE:CANDIDATE ...]

Default: each file audited twice with its harness in a fresh Service (the first call, then the warm one).
--vs-validate: per candidate (the validation corpus and KB_UNITS, or --pairs) in one Service, an untimed validate,
then validate and audit --reference, each warm: their seconds, their ratio, the total against 1.5.
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
RATIO_BAR = 1.5  # issue 45: audit with a reference <= validate + 50 %
# KernelBench-form units for --vs-validate (a clean candidate and a planted bug of other shapes of problem)
KB_UNITS = ["softplus/good.py", "softplus/tail_floor_grid.py", "log_softmax/good.py", "swish/stride_flat.py"]


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


def vs_validate(pairs: list[tuple[str, str]]) -> list[dict]:
    """(reference, candidate) pairs: warm validate and warm audit --reference seconds, and what each said."""
    from pytorch_to_triton.service import Service

    rows = []
    svc = Service(ROOT)
    try:
        for ref, cand in pairs:
            svc.validate(reference=ref, candidates=[cand])  # warm: worker, Triton cache, target-compile cache
            t0 = time.monotonic()
            v = svc.validate(reference=ref, candidates=[cand])
            tv = time.monotonic() - t0
            t0 = time.monotonic()
            a = svc.audit(path=cand, reference=ref)
            ta = time.monotonic() - t0
            probes = sum(1 for p in a.probes if p.get("ran") and not p.get("not_run"))
            rows.append({"candidate": cand, "validate_s": round(tv, 1), "audit_s": round(ta, 1),
                         "ratio": round(ta / tv, 2) if tv else None, "validate": v.verdict.split(" (")[0],
                         "audit_p0": a.counts.get("P0", 0), "probes_ran": probes, "device": v.device})
            print(f"{cand}: validate {tv:.1f} s, audit {ta:.1f} s ({ta / tv:.2f}x)", file=sys.stderr, flush=True)
    finally:
        svc.close()
    return rows


def corpus_pairs() -> list[tuple[str, str]]:
    """The validation corpus (GPU-only entries left out without a GPU) and KB_UNITS, as (reference, candidate)."""
    has_cuda = Path("/dev/nvidiactl").exists()
    out = []
    for folder, keys in (("tests/validation_corpus", None), ("tests/kernelbench_corpus", KB_UNITS)):
        labels = json.loads((ROOT / folder / "labels.json").read_text())
        for key in keys or list(labels):
            if labels[key].get("gpu_only") and not has_cuda:
                continue
            out.append((f"{folder}/{key.split('/')[0]}/reference.py", f"{folder}/{key}"))
    return out


def ratio_table(rows: list[dict]) -> str:
    """Markdown: per candidate, validate and audit seconds and their ratio; the totals against RATIO_BAR."""
    out = ["| candidate | validate | validate s | audit s | audit / validate | audit P0 | probes ran |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['candidate'].removeprefix('tests/')} | {r['validate']} | {r['validate_s']} | "
                   f"{r['audit_s']} | {r['ratio']} | {r['audit_p0']} | {r['probes_ran']} |")
    tv, ta = sum(r["validate_s"] for r in rows), sum(r["audit_s"] for r in rows)
    worst = max((r["ratio"] or 0 for r in rows), default=0)
    over = [r["candidate"] for r in rows if (r["ratio"] or 0) > RATIO_BAR]
    out += ["", f"Total: validate {tv:.0f} s, audit {ta:.0f} s: {ta / tv:.2f}x (bar {RATIO_BAR}x: "
            f"{'meets' if ta <= RATIO_BAR * tv else 'MISSES'}); worst file {worst}x; over the bar: "
            f"{', '.join(over) or 'none'}. Device: {', '.join(sorted({r['device'] for r in rows}))}."]
    return "\n".join(out)


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
    ap.add_argument("--vs-validate", action="store_true", help="issue 45: audit --reference against validate on the "
                    "validation corpus and KB_UNITS (or on --pairs)")
    ap.add_argument("--pairs", nargs="+", help="with --vs-validate: REFERENCE:CANDIDATE pairs instead of the corpus")
    a = ap.parse_args()
    if a.vs_validate:
        pairs = [tuple(p.split(":", 1)) for p in a.pairs] if a.pairs else corpus_pairs()
        rows = vs_validate(pairs)  # type: ignore[arg-type]
        text = json.dumps(rows, indent=1)
        if a.json:
            Path(a.json).write_text(text)
        if os.environ.get("OUT"):
            Path(os.environ["OUT"], "audit_vs_validate.json").write_text(text)
        print(ratio_table(rows))
        return
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
