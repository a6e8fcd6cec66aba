"""Does Triton's frontend pass speak for the full compile? (issue 36's cost: what a budgeted validation relies on)

A validation on a CPU sends every autotune config through Triton's frontend (AST -> TTIR, worker/target_compile_child
front_one) and only some to a cubin (the interpreter's config, the two likeliest to overflow, the rest while the
budget lasts); configs with the same TTIR and backend options ("binary" key) are compiled once. This checks both
claims on every gallery stage (and trial stage) with this machine's Triton:
  gap       configs the frontend passed whose full compile fails (the budget would have missed them): expect 0;
  front_bad configs the frontend refused that the full compile accepts: must be 0;
  split     configs with one binary key but different cubins (the dedupe would have lied): must be 0;
and times each level. Stages are validated first under the interpreter (trials=1) with the launch dump on, as
benchmarks/compile_agreement.py does; then each kernel's first launch is compiled config by config in this process.

    PYTHONPATH=$PWD/server python benchmarks/target_compile_levels.py [--only layernorm] [--budget-s 200]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def full(spec: dict, cfg, jit, tool) -> dict:
    """The whole compile for sm_90: ok or the error, the cubin's hash and resources."""
    import triton

    from pytorch_to_triton.worker.device import target_compile_child as child

    t0 = time.perf_counter()
    try:
        target, _, src, options = child._prepare(spec, cfg, 90, jit)
        k = triton.compile(src, target=target, options=options)
    except Exception as e:  # noqa: BLE001 - the compiler's verdict is the datum
        return {"ok": False, "error": f"{type(e).__name__}: {str(e)[-200:]}", "s": time.perf_counter() - t0}
    cubin = k.asm.get("cubin", b"")
    return {"ok": True, "cubin": hashlib.sha256(cubin).hexdigest()[:16], "s": time.perf_counter() - t0,
            "shared": int(getattr(k.metadata, "shared", 0) or 0), **child._resources(cubin, tool)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated: only stages whose path contains one of these")
    ap.add_argument("--budget-s", type=float, default=200.0, help="for the compiles (the validations take apart)")
    ap.add_argument("--record-s", type=float, default=90.0, help="for the validations that record the launches")
    ap.add_argument("--from", dest="from_dir", help="reuse the launch dumps in this folder")
    a = ap.parse_args()
    from compile_agreement import read_dumps, record

    with tempfile.TemporaryDirectory() as tmp:
        if a.from_dir:
            launches = read_dumps(Path(a.from_dir))
        else:
            record(Path(tmp), a.record_s, a.only)
            launches = read_dumps(Path(tmp))
    os.environ.pop("TRITON_INTERPRET", None)
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="p2t_levels_")  # every compile real
    from pytorch_to_triton.worker.device import target_compile_child as child

    tool, mods = child._cuobjdump(), {}
    firsts: dict[tuple[str, str], dict] = {}
    for s in launches:
        firsts.setdefault((s["file"], s["qualname"]), s)
    t_end = time.monotonic() + a.budget_s
    table, skipped = [], []
    for (file, qualname), s in firsts.items():
        if time.monotonic() > t_end:
            skipped.append(f"{Path(file).name}:{s['kernel']}")
            continue
        try:
            outer, jit = child._find(child._load(s, mods), qualname)
        except Exception as e:  # noqa: BLE001
            skipped.append(f"{Path(file).name}:{s['kernel']} ({type(e).__name__})")
            continue
        configs = child._configs(outer, s) if s.get("autotuned") else [None]
        rec = {"stage": s["candidate"], "kernel": s["kernel"], "configs": len(configs), "gap": [], "front_bad": [],
               "split": 0, "front_s": 0.0, "full_s": 0.0, "binaries": 0, "done": 0}
        cubins: dict[str, set[str]] = {}
        for cfg in configs:
            if time.monotonic() > t_end:
                break
            fr = child.front_one(s, cfg, 90, jit)
            fu = full(s, cfg, jit, tool)
            rec["front_s"] += fr["compile_s"]
            rec["full_s"] += fu["s"]
            rec["done"] += 1
            name = child._describe(cfg, s)
            if fr["ok"] and not fu["ok"]:
                rec["gap"].append(f"{name}: {fu['error'][:120]}")
            if not fr["ok"] and fu["ok"]:
                rec["front_bad"].append(f"{name}: {fr.get('error', '')[:120]}")
            if fr["ok"] and fu["ok"]:
                cubins.setdefault(child.binary_key(fr, s, cfg, 90), set()).add(fu["cubin"])
        rec["binaries"] = len(cubins)
        rec["split"] = sum(len(v) > 1 for v in cubins.values())
        rec["front_s"], rec["full_s"] = round(rec["front_s"], 2), round(rec["full_s"], 2)
        table.append(rec)
        print(json.dumps(rec), flush=True)
    out = Path(os.environ.get("OUT", "/tmp/out"))
    out.mkdir(parents=True, exist_ok=True)
    import triton

    (out / "target_compile_levels.json").write_text(json.dumps({"triton": triton.__version__, "rows": table,
                                                                "skipped": skipped}, indent=1))
    print("| stage | kernel | configs compiled | distinct binaries | gap | front_bad | split | front s | full s |")
    for r in table:
        print(f"| {r['stage']} | {r['kernel']} | {r['done']}/{r['configs']} | {r['binaries']} | {len(r['gap'])} | "
              f"{len(r['front_bad'])} | {r['split']} | {r['front_s']} | {r['full_s']} |")
    tot = {k: sum(len(r[k]) if isinstance(r[k], list) else r[k] for r in table)
           for k in ("done", "binaries", "gap", "front_bad", "split", "front_s", "full_s")}
    print(f"total (Triton {triton.__version__}): {tot['done']} configs, {tot['binaries']} distinct binaries; gap "
          f"{tot['gap']}, front_bad {tot['front_bad']}, split {tot['split']}; frontend {tot['front_s']:.1f} s, full "
          f"{tot['full_s']:.1f} s; skipped: {skipped or 'nothing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
