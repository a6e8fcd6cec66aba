"""compute-sanitizer's own verdict on every audit P0 that claims an out-of-bounds access, and the time it adds (issue
35, item 3; gpu_parts/sanitizer.sh and sanitizer_heldout.sh run it on the GPU).

    PYTHONPATH=$PWD/server python3 benchmarks/sanitizer_check.py [--group fixtures|held_out] [--budget S] [--json OUT]
    PYTHONPATH=$PWD/server python3 benchmarks/sanitizer_check.py --claims OUT.json   # CPU: collect the claims

--claims audits both groups' files and keeps each P0 whose evidence claims an out-of-bounds access, with its probe
variant. --group fixtures (out-of-bounds fixtures beside clean twins) runs the full audit with the worker's sanitizer;
--group held_out runs a memcheck child per file over the CPU's claims (--from). One row per claim: file, variant, who
claimed it, the sanitizer's verdict, its seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
CLAIMS = ROOT / "benchmarks" / "results" / "sanitizer_claims_cpu_2026-12-06.json"
FIX, PKG, CORPUS = "tests/audit_probe_fixtures", "tests/audit_import_fixtures", "tests/audit_public_corpus"
GROUPS = {
    # in order of what matters if time runs out: each bad one, then its clean twin
    "fixtures": [(f"{PKG}/scalepkg/ops_abs.py", f"{PKG}/harness.py"), (f"{FIX}/ce_ignore_index.py", f"{FIX}/harness_ce.py"),
                 (f"{PKG}/scalepkg/ops_good.py", f"{PKG}/harness.py"), (f"{FIX}/ce_good.py", f"{FIX}/harness_ce.py"),
                 (f"{FIX}/scale_grad_dense.py", f"{FIX}/harness_scale.py")],
    # probe_labels.json: the P0 findings and known problems whose reason says out of bounds
    "held_out": [f"{CORPUS}/{f}" for f in (
        "lightning_thunder/triton_crossentropy_impl.py", "sageattention/attn_qk_int8_per_block_causal.py",
        "colossalai/fused_rotary_embedding.py", "colossalai/rotary_cache_copy.py", "colossalai/softmax.py",
        "colossalai/rms_layernorm.py", "fbgemm_gpu/triton_jagged_dense_elementwise_mul_jagged_out.py",
        "auto_round/dequant.py", "megatron_core/fused_mla_yarn_rope_apply.py", "flag_gems/embedding.py")],
}


def _harness(file: str) -> str:
    labels = json.loads((ROOT / CORPUS / "probe_labels.json").read_text())
    return labels["files"][file]["harness"]


def _pairs(group: str) -> list[tuple[str, str]]:
    return [p if isinstance(p, tuple) else (p, _harness(p)) for p in GROUPS[group]]


def _variant(reproducer: str) -> str:
    words = shlex.split(reproducer) if reproducer else []
    return words[words.index("--only") + 1] if "--only" in words[:-1] else ""


def _claims_oob(f: Any) -> bool:
    text = f"{f.evidence} {f.why}".lower()
    return "illegal memory access" in text or "out-of-bounds" in text or "out of bounds" in text


def collect_claims(groups: list[str]) -> list[dict[str, Any]]:
    """Audit each file (this machine's device); every P0 claiming an out-of-bounds access, with its variant(s)."""
    from pytorch_to_triton.audit import Finding
    from pytorch_to_triton.audit.sanitizer_evidence import oob_variants
    from pytorch_to_triton.service import Service

    out = []
    svc = Service(ROOT)
    try:
        for g in groups:
            for file, harness in _pairs(g):
                t0 = time.monotonic()
                rep = svc.audit(path=file, harness=harness, compile=False, timeout_s=600)
                claims = [{"check": f.check, "line": f.line, "file_of_line": f.file, "variant": v,
                           "evidence": f.evidence[:240]} for f in rep.findings if f.severity == "P0" and _claims_oob(f)
                          for v in oob_variants(Finding.model_validate({**f.model_dump(), "id": f.check}))]
                out.append({"group": g, "file": file, "harness": harness, "seconds": round(time.monotonic() - t0, 1),
                            "claims": claims})
                print(f"{file}: {len(claims)} out-of-bounds P0 claim(s) in {out[-1]['seconds']} s", flush=True)
    finally:
        svc.close()
    return out


def _verdict(variant: str, runs: list[dict[str, Any]]) -> str:
    mem = next((r for r in runs if r.get("tool") == "memcheck"), None)
    if mem is None:
        return "not run"
    hits = [e for e in mem.get("errors") or [] if e.get("variant") == variant]
    if hits:
        e = hits[0]
        return (f"CONFIRMED: {e['what']} at {e.get('kernel')} ({Path(str(e.get('file'))).name}:{e.get('line')}), "
                f"{sum(h.get('count', 1) for h in hits)} report(s)")
    if variant in (mem.get("ran") or []):
        return "no invalid access seen"
    return f"not run ({mem.get('not_run') or 'the child stopped before it (an earlier error poisons the context)'})"


def check(group: str, claims: list[dict[str, Any]], budget_s: float) -> list[dict[str, Any]]:
    """On the GPU: the sanitizer's verdict on each claim (the CPU's, and the GPU audit's own for the fixtures)."""
    from pytorch_to_triton.service import Service
    from pytorch_to_triton.worker.probe import sanitizer

    exe = sanitizer.find()
    by_file = {c["file"]: c for c in claims}
    rows: list[dict[str, Any]] = []
    t_start = time.monotonic()
    svc = Service(ROOT) if group == "fixtures" else None  # one warm worker for the audits
    try:
        _check_files(group, by_file, rows, t_start, budget_s, exe, svc)
    finally:
        if svc is not None:
            svc.close()
    return rows


def _check_files(group: str, by_file: dict[str, Any], rows: list[dict[str, Any]], t_start: float, budget_s: float,
                 exe: str | None, svc: Any) -> None:
    from pytorch_to_triton.worker.probe import sanitizer

    for file, harness in _pairs(group):
        if time.monotonic() - t_start > budget_s:
            rows.append({"file": file, "variant": "-", "by": "-", "verdict": "not reached (time budget)"})
            continue
        cpu = [c["variant"] for c in by_file.get(file, {}).get("claims", []) if c["variant"]]
        gpu_rows: list[dict[str, Any]] = []
        done: set[str] = set()
        if group == "fixtures":
            gpu_rows, done = _audit_on_gpu(svc, file, harness)
            rows += gpu_rows
        todo = [v for v in dict.fromkeys(cpu) if v not in done]
        if not todo:
            if not cpu and not gpu_rows:
                rows.append({"file": file, "variant": "-", "by": "-", "verdict": "no out-of-bounds claim (clean)"})
            continue
        if exe is None:
            rows += [{"file": file, "variant": v, "by": "cpu", "verdict": "compute-sanitizer not found"} for v in todo]
            continue
        res = sanitizer.run({"target": str(ROOT / file), "harness": str(ROOT / harness)}, todo[:sanitizer.MAX_VARIANTS],
                            60, exe, tools=("memcheck",))
        runs = res.get("runs", [])
        secs = sum(r.get("seconds") or 0 for r in runs)
        rows += [{"file": file, "variant": v, "by": "cpu", "verdict": _verdict(v, runs), "sanitizer_s": secs,
                  "summary": "; ".join(str(r.get("summary") or r.get("not_run")) for r in runs)} for v in todo]


def _audit_on_gpu(svc: Any, file: str, harness: str) -> tuple[list[dict[str, Any]], set[str]]:
    """The full audit on this machine (the worker runs the sanitizer after the probes): its out-of-bounds P0 claims
    with the verdict the report gives them, its own sanitizer findings, the variants the sanitizer ran."""
    from pytorch_to_triton.audit import Finding
    from pytorch_to_triton.audit.sanitizer_evidence import oob_variants

    t0 = time.monotonic()
    rep = svc.audit(path=file, harness=harness, compile=False, timeout_s=600)
    total = round(time.monotonic() - t0, 1)
    by = next((c.split(" on ")[1].split(";")[0] for c in rep.checked if c.startswith("probes:")), "?")
    by = "gpu" if by == "cuda" else by  # the probes of this machine's audit (cpu: the interpreter's bounds check)
    san = next((p for p in rep.probes if p.get("name") == "sanitizer"), {})
    secs = sum(float(n.rsplit("(", 1)[-1].rstrip(" s)")) for n in san.get("notes", []) if n.endswith(" s)"))
    rows = []
    for f in rep.findings:
        if f.severity != "P0":
            continue
        if f.check.startswith("sanitizer_"):
            rows.append({"file": file, "variant": f.evidence.split(": ", 1)[0], "by": "sanitizer",
                         "verdict": f"{f.check} P0 at {f.file}:{f.line}", "sanitizer_s": secs, "audit_s": total})
        elif _claims_oob(f):
            rows.append({"file": file, "variant": ", ".join(oob_variants(Finding.model_validate(
                {**f.model_dump(), "id": f.check}))) or _variant(f.reproducer), "by": by,
                         "verdict": f.evidence.rsplit(" | ", 1)[-1] if " | compute-sanitizer" in f.evidence else
                         "no verdict in the report", "sanitizer_s": secs, "audit_s": total})
    if not rows:
        rows.append({"file": file, "variant": "-", "by": by, "verdict": f"no out-of-bounds P0 (P0 {rep.counts['P0']})"
                     f"; sanitizer: {'; '.join(san.get('notes', [])) or san.get('not_run') or 'no record'}",
                     "sanitizer_s": secs, "audit_s": total})
    return rows, set(san.get("ran") or [])


def table(rows: list[dict[str, Any]]) -> str:
    out = ["| file | variant | claimed by | sanitizer's verdict | sanitizer s | audit s |", "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['file'].split('/', 1)[-1][:48]} | {r['variant'][:32]} | {r['by']} | {r['verdict'][:110]} | "
                   f"{r.get('sanitizer_s', '')} | {r.get('audit_s', '')} |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", help="collect the out-of-bounds P0 claims of every group's files into this JSON")
    ap.add_argument("--group", choices=sorted(GROUPS), default="fixtures")
    ap.add_argument("--from", dest="source", default=str(CLAIMS), help="the claims JSON (--claims) to check")
    ap.add_argument("--budget", type=float, default=200.0, help="start no new file after this many seconds")
    ap.add_argument("--json", help="also write the rows here")
    a = ap.parse_args()
    if a.claims:
        Path(a.claims).write_text(json.dumps(collect_claims(sorted(GROUPS)), indent=1))
        return
    claims = json.loads(Path(a.source).read_text()) if Path(a.source).is_file() else []
    rows = check(a.group, claims, a.budget)
    text = json.dumps(rows, indent=1)
    if a.json:
        Path(a.json).write_text(text)
    if os.environ.get("OUT"):
        Path(os.environ["OUT"], f"sanitizer_check_{a.group}.json").write_text(text)
    print(table(rows))


if __name__ == "__main__":
    main()
