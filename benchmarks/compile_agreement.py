"""Does the CPU-side compile for sm_90 agree with the GPU's own compile, and what does it cost? (issues 36, 46)

    python benchmarks/compile_agreement.py --save benchmarks/results/target_compile_cpu_triton39.json   # a CPU
    python3 benchmarks/compile_agreement.py --against benchmarks/results/target_compile_cpu_triton39.json  # a GPU
    python benchmarks/compile_agreement.py --cost [--only softmax] [--repeat 2]   # its cost on a CPU validation

Every trial and gallery stage is validated once with P2T_DUMP_LAUNCH_SPECS set (each launch's specialisation, and on a
GPU its real compile), then each launch is compiled for sm_90 by the product's CPU-side compile. Per launch, agree =
the same success and registers within REG_TOLERANCE: agree_here (GPU against CPU-side on one machine) and agree_saved
(a CPU's saved launches against this Triton). JSON to $OUT/compile_agreement.json (--cost: target_compile_cost.json).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
REG_TOLERANCE = 8
PARALLEL = 8  # compile children at once (the GPU host has 16 cores; half of this machine's at most)


def stages() -> list[tuple[Path, Path]]:
    """(reference, stage) of every trial stage, then every gallery stage (the trials first: the budget may end)."""
    out = []
    for stage in sorted(ROOT.glob("trials/*/*/stage*.py")) + sorted(ROOT.glob("examples/*/stage*.py")):
        ref = stage.parent / "reference.py"
        if ref.exists():
            out.append((ref, stage))
    return out


def portable(spec: dict[str, Any]) -> str:
    """A spec's key without the machine: the file relative to the repository."""
    try:
        rel = str(Path(spec["file"]).resolve().relative_to(ROOT))
    except ValueError:
        rel = Path(spec["file"]).name
    return json.dumps([rel, spec["qualname"], spec["params"], sorted(spec["options"].items())], sort_keys=True,
                      default=str)


def record(dump: Path, budget_s: float, only: str | None) -> list[str]:
    """Validate every stage with the launch dump on; what was skipped."""
    from pytorch_to_triton.service import Service

    os.environ["P2T_DUMP_LAUNCH_SPECS"] = str(dump)
    os.environ.setdefault("P2T_SANDBOX", "0")  # the dump folder is outside a confined worker's writable places
    svc = Service(ROOT)
    skipped, t_end = [], time.monotonic() + budget_s
    try:
        for ref, stage in stages():
            if only and not any(w in str(stage) for w in only.split(",")):
                continue
            left = t_end - time.monotonic()
            if left < 10:
                skipped.append(f"{stage.relative_to(ROOT)}: budget spent")
                continue
            t0 = time.monotonic()
            try:
                rep = svc.validate(reference=str(ref.relative_to(ROOT)), candidates=[str(stage.relative_to(ROOT))],
                                   trials=1, timeout_s=min(300.0, left), target_gpus="none")
                verdict = rep.candidates[0].verdict_line
            except Exception as e:  # noqa: BLE001 - a stage that cannot run is named, the others go on
                verdict = f"{type(e).__name__}: {str(e)[:200]}"
            print(f"{stage.relative_to(ROOT)}: {verdict} ({time.monotonic() - t0:.1f} s)", file=sys.stderr, flush=True)
    finally:
        svc.close()
    return skipped


def read_dumps(dump: Path) -> list[dict[str, Any]]:
    """Every launch the validations dumped (P2T_DUMP_LAUNCH_SPECS)."""
    launches = []
    for f in sorted(dump.glob("*.json")):
        d = json.loads(f.read_text())
        for s in d["specs"]:
            if not s.get("error"):
                launches.append(dict(s, candidate=d["candidate"], device=d["device"], gpu=d.get("gpu"),
                                     recorded_with=d["triton_version"]))
    return launches


def rerooted(spec: dict[str, Any]) -> dict[str, Any]:
    """A saved launch with its file under this checkout (saved files name another machine's paths)."""
    rel = json.loads(spec["portable_key"])[0]
    return dict(spec, file=str(ROOT / rel)) if (ROOT / rel).exists() else spec


def _key(s: dict[str, Any]) -> str:
    return json.dumps([s["file"], s["qualname"], s["params"], sorted(s["options"].items())], sort_keys=True,
                      default=str)


def compile_exact(launches: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each launch compiled for sm_90 exactly as recorded (no other autotune config); key -> row."""
    import triton

    from pytorch_to_triton.worker.device.launch_specs import LaunchSpec
    from pytorch_to_triton.worker.device.target_compile import TargetCompiler

    specs = [LaunchSpec(kernel=s["kernel"], qualname=s["qualname"], module=s["module"], file=s["file"],
                        params=s["params"], options=s["options"], autotuned=False) for s in launches]
    n = max(1, min(PARALLEL, (os.cpu_count() or 2) // 2, len(specs)))
    comps = [TargetCompiler([90], triton.__version__, max_compiles=10_000, max_per_kernel=10_000, timeout_s=3000)
             for _ in range(n)]
    for i, comp in enumerate(comps):  # one child each, compiling at the same time
        comp.submit(specs[i::n])
    out = {}
    for comp in comps:
        for note in comp.collect()["notes"]:
            print(f"note: {note}", file=sys.stderr)
        for j in comp.jobs.values():
            row = j.rows[0] if j.rows else {"ok": None, "error": j.unreachable}
            out[j.spec.key()] = dict(row, triton_version=triton.__version__)
    return out


def agree(gpu: dict[str, Any] | None, cpu: dict[str, Any] | None) -> str:
    """'yes', 'no: why' or '-' (nothing to compare)."""
    if not gpu or not cpu or cpu.get("ok") is None:
        return "-"
    if not gpu.get("ok") and "OutOfResources" in str(gpu.get("error")) and cpu.get("ok"):
        # compiled on both sides, refused at launch on the GPU: the CPU side must have called it unfit
        from pytorch_to_triton.worker.device.target_compile import _unfit

        return "yes" if _unfit(cpu, 90) else "no: the GPU ran out of resources, the CPU side saw it fit"
    if bool(gpu.get("ok")) != bool(cpu.get("ok")):
        return f"no: GPU {'compiled' if gpu.get('ok') else 'failed'}, CPU {'compiled' if cpu.get('ok') else 'failed'}"
    if gpu.get("ok") and gpu.get("n_regs") is not None and cpu.get("n_regs") is not None and \
            abs(int(gpu["n_regs"]) - int(cpu["n_regs"])) > REG_TOLERANCE:
        return f"no: registers {gpu['n_regs']} vs {cpu['n_regs']}"
    return "yes"


def cost(a: argparse.Namespace) -> int:
    """Per gallery stage, one warm worker, trials=1: base (no target), cold (sm_90, caches emptied), warm (sm_90 again),
    base and cold alternating in order, each row with the load average (issues 36 and 46; bar < 25 %)."""
    import shutil

    from pytorch_to_triton.service import Service

    svc = Service(ROOT)
    caches = [svc.ws.state_dir / "triton_cache"]
    rows = []
    stages = [s for s in sorted(ROOT.glob("examples/*/stage*.py"))
              if not a.only or any(w in str(s) for w in a.only.split(","))]

    def empty_caches() -> None:  # keep the folders (a confined worker's rules hold on them)
        for c in caches:
            for p in c.glob("*"):
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)

    try:
        for n, stage in enumerate(stages):
            ref, cand = str((stage.parent / "reference.py").relative_to(ROOT)), str(stage.relative_to(ROOT))
            # untimed, right before: the reference's cached outputs (ref_cache keeps 16 MiB, not every stage's)
            svc.validate(reference=ref, candidates=[cand], trials=1, target_gpus="none")
            rec: dict = {"stage": cand, "load_before": round(os.getloadavg()[0], 2)}
            order = [m for _ in range(a.repeat) for m in (("base", "cold") if n % 2 == 0 else ("cold", "base"))]
            times: dict[str, list[float]] = {"base": [], "cold": [], "warm": []}
            for mode in order + ["warm"]:
                if mode == "cold":
                    empty_caches()
                t0 = time.perf_counter()
                rep = svc.validate(reference=ref, candidates=[cand], trials=1,
                                   target_gpus="none" if mode == "base" else "sm_90")
                times[mode].append(round(time.perf_counter() - t0, 2))
                c = rep.candidates[0]
                if mode != "base":
                    tc = c.model_dump().get("target_compile") or {}
                    rec[f"{mode}_rows"] = len(tc.get("rows") or [])
                    rec[f"{mode}_to_cubin"] = tc.get("configs_to_cubin")
                    rec[f"{mode}_wait_s"] = tc.get("wait_s")
                    rec[f"{mode}_child_s"] = tc.get("child_s")  # the child's imports, frontend, full compiles
                    rec["failed"] = sum(r.get("ok") is False for r in tc.get("rows") or [])
                    rec[f"{mode}_notes"] = [x[:200] for x in tc.get("notes") or []]
                rec[f"{mode}_ok"] = c.ok
                rec[f"{mode}_dry_run_s"] = (c.model_dump().get("full_size") or {}).get("seconds")  # issue 46's
                if not c.ok:
                    rec[f"{mode}_why"] = c.verdict_line + "; " + "; ".join(f.message[:160] for f in c.findings[:2])
            for m, ts in times.items():
                rec[m] = sorted(ts)[len(ts) // 2]
                rec[f"{m}_all"] = ts
            rec["order"] = order
            rec["load_after"] = round(os.getloadavg()[0], 2)
            rec["cold_pct"] = round(100 * (rec["cold"] / rec["base"] - 1), 1)
            rec["warm_pct"] = round(100 * (rec["warm"] / rec["base"] - 1), 1)
            rows.append(rec)
            print(json.dumps(rec), flush=True)
    finally:
        svc.close()
    tot = {m: round(sum(r[m] for r in rows), 1) for m in ("base", "cold", "warm")}
    summary = {"stages": len(rows), **tot, "cold_pct": round(100 * (tot["cold"] / tot["base"] - 1), 1),
               "warm_pct": round(100 * (tot["warm"] / tot["base"] - 1), 1)}
    out = Path(os.environ.get("OUT", "/tmp/out"))
    out.mkdir(parents=True, exist_ok=True)
    (out / "target_compile_cost.json").write_text(json.dumps({"rows": rows, "summary": summary}, indent=1))
    print("| stage | base s | cold s | warm s | cold % | warm % | configs (to a cubin) | compile failures | load |")
    for r in rows:
        print(f"| {r['stage']} | {r['base']} | {r['cold']} | {r['warm']} | {r['cold_pct']} | {r['warm_pct']} | "
              f"{r.get('cold_rows')} ({r.get('cold_to_cubin')}) | {r.get('failed')} | "
              f"{r['load_before']}-{r['load_after']} |")
    print(f"total over {summary['stages']} stages: base {tot['base']} s, cold {tot['cold']} s "
          f"({summary['cold_pct']:+} %), warm {tot['warm']} s ({summary['warm_pct']:+} %)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--save", help="CPU: write the recorded launches and their sm_90 rows to this JSON")
    ap.add_argument("--against", help="GPU: also compare with the rows a CPU run saved (--save)")
    ap.add_argument("--budget-s", type=float, default=150.0, help="time for the validations (default 150 s)")
    ap.add_argument("--only", help="comma-separated: only stages whose path contains one of these")
    ap.add_argument("--cost", action="store_true", help="the compile's cost on a CPU validation of the gallery")
    ap.add_argument("--repeat", type=int, default=1, help="--cost: base/cold pairs per stage (medians kept)")
    a = ap.parse_args()
    if a.cost:
        return cost(a)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        skipped = record(Path(tmp), a.budget_s, a.only)
        launches = read_dumps(Path(tmp))
    t_rec = time.monotonic() - t0
    saved_rows = json.loads(Path(a.against).read_text())["launches"] if a.against and Path(a.against).exists() else []
    saved_specs = [rerooted(dict(r["spec"], portable_key=r["portable_key"])) for r in saved_rows if r.get("spec")]
    rows = compile_exact(launches + saved_specs)
    t_comp = time.monotonic() - t0 - t_rec
    saved = {r["portable_key"]: r for r in saved_rows}
    table = []
    for s in launches:
        other = saved.get(portable(s), {}).get("cpu")
        spec = {k: s[k] for k in ("kernel", "qualname", "module", "file", "params", "options")}
        table.append({"candidate": s["candidate"], "kernel": s["kernel"], "portable_key": portable(s), "spec": spec,
                      "gpu": s.get("facts"), "cpu": rows.get(_key(s)), "saved_cpu": other,
                      "agree_here": agree(s.get("facts"), rows.get(_key(s))), "agree_saved": agree(s.get("facts"),
                                                                                              other)})
    for s in saved_specs:  # the CPU machine's launches, compiled again with this Triton
        here, there = rows.get(_key(s)), saved[s["portable_key"]].get("cpu")
        table.append({"candidate": saved[s["portable_key"]]["candidate"], "kernel": s["kernel"],
                      "portable_key": s["portable_key"], "gpu": None, "cpu": here, "saved_cpu": there,
                      "agree_here": "-", "agree_saved": agree(here, there) if here and there else "-",
                      "versions": f"{(here or {}).get('triton_version')} vs {(there or {}).get('triton_version')}"})
    out = {"launches": table, "skipped": skipped, "record_s": round(t_rec, 1), "compile_s": round(t_comp, 1),
           "device": launches[0]["device"] if launches else None, "gpu": launches[0].get("gpu") if launches else None}
    if a.save:
        Path(a.save).parent.mkdir(parents=True, exist_ok=True)
        Path(a.save).write_text(json.dumps(out, separators=(",", ":"), default=str))  # one line: a data file
    dest = Path(os.environ.get("OUT", "/tmp/out"))
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "compile_agreement.json").write_text(json.dumps(out, indent=1, default=str))

    def cell(r: dict[str, Any] | None) -> str:
        if not r:
            return "-"
        if not r.get("ok"):
            return "FAIL"
        return f"{r.get('n_regs')}r/{r.get('n_spills')}s/{r.get('shared')}B"

    print("| stage | kernel | GPU | CPU-side (this Triton) | CPU-side (saved) | agree | agree saved |")
    for t in table:
        print(f"| {t['candidate']} | {t['kernel']} | {cell(t['gpu'])} | {cell(t['cpu'])} | {cell(t['saved_cpu'])} | "
              f"{t['agree_here']} | {t['agree_saved']} |")
    for col in ("agree_here", "agree_saved"):
        vals = [t[col] for t in table if t[col] != "-"]
        print(f"{col}: {sum(v == 'yes' for v in vals)}/{len(vals)} launches agree (same ok, registers within "
              f"+-{REG_TOLERANCE})")
    failed_cpu = sum(1 for t in table if t["cpu"] and t["cpu"].get("ok") is False)
    print(f"launches {len(table)}, CPU-side compile failures {failed_cpu}; record {t_rec:.0f} s, compile "
          f"{t_comp:.0f} s; skipped: {skipped or 'nothing'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
