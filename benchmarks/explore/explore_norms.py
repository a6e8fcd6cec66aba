"""Exploration for the rmsnorm, layernorm and softmax gallery stage 3 (issue 20, items 1-3): configs side by side.

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/explore/explore_norms.py [--only rmsnorm:8192x8192,...]
        [--budget-s 170]

For every point (op, shape), bench shapes first, then vs_liger.py's sweep shapes:
- the stage-3 wrapper as users call it (autotuned on its first call, then `_FastLaunch`), forward under no_grad, with
  its host time per call (vs_liger.py's `_host_ms`: 20 back-to-back calls between two syncs, no_grad and input
  rotation included); at the norms' bench shapes also forward+backward; Liger and torch.compile (a fresh
  `torch.compile(dynamic=False)` per shape) at the bench shapes and at layernorm 16384x16384;
- fixed configs of the stage-3 forward kernel itself (the module's JITFunction under the autotuner, launched through
  the module's `_FastLaunch`, so ~5 us of host time per call): ROWS, num_warps, plain grid or persistent, LATE_W
  (layernorm and rmsnorm: weight/bias loaded inside the tile), each with its registers and spills from the compiled
  binary; persistent configs also at a grid sized from the real occupancy (registers per thread -> programs per SM)
  instead of the configured PPS = 64 // num_warps, which assumes 32 registers per thread;
- every variant's output is checked against the eager fp32 reference before it is timed (mismatch: not timed).
Timing: triton.testing.do_bench(warmup 25 ms, rep 100 ms, median; it flushes L2), inputs rotated over up to 4 sets
below 256 MB. % copy = (read + write bytes) / ms against the 1 GiB copy measured here. A time budget (default 170 s)
skips the rest; each point also has its own slice. Writes $OUT/explore_norms.json; prints the table last.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = Path(os.environ.get("OUT") or "/tmp/out")


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


VL = _load(ROOT / "benchmarks" / "vs_liger.py", "vs_liger_for_explore")  # inputs, eager, Liger, checks, timing
MODS = {op: _load(ROOT / "examples" / op / "stage3.py", f"explore_{op}_stage3") for op in ("rmsnorm", "layernorm",
                                                                                           "softmax")}
ENTRY = {"rmsnorm": "rms_norm", "layernorm": "layer_norm", "softmax": "reference"}
# (op, shape, slice of seconds, with baselines): bench shapes first, then the sweep.
POINTS = [("rmsnorm", (8192, 8192), 30, True), ("layernorm", (8192, 8192), 30, True),
          ("softmax", (16384, 4096), 22, True), ("layernorm", (16384, 16384), 22, True),
          ("softmax", (16384, 1024), 14, False), ("rmsnorm", (8192, 1024), 12, False),
          ("layernorm", (8192, 1024), 12, False), ("rmsnorm", (16384, 16384), 12, False),
          ("softmax", (16384, 16384), 12, False)]


def _variants(op: str, block_n: int) -> list[dict[str, Any]]:
    """Fixed configs to try, the likeliest first: (ROWS, num_warps) pairs with 8-64 fp32 values per thread,
    plain and persistent, LATE_W on the norms where weight (and bias) are 16+ registers per thread."""
    if block_n >= 16384:
        pairs = [(1, 16), (1, 32), (1, 8)]
    elif block_n >= 8192:
        pairs = [(1, 16), (1, 8), (1, 32), (2, 16), (2, 32)]
    elif block_n >= 4096:
        pairs = [(1, 8), (1, 16), (2, 16), (1, 4), (2, 8), (4, 16), (4, 32)]
    else:  # 1024
        pairs = [(1, 4), (2, 4), (4, 4), (4, 8), (8, 8), (8, 16), (16, 16)]
    out = []
    for rows, w in pairs:
        for pers in (False, True):
            out.append({"ROWS": rows, "num_warps": w, "PPS": 64 // w if pers else 0, "LATE_W": False})
    if op != "softmax":
        for rows, w in pairs:
            if block_n // (32 * w) >= 16:
                for pers in (False, True):
                    out.append({"ROWS": rows, "num_warps": w, "PPS": 64 // w if pers else 0, "LATE_W": True})
    return out


def _occupancy(ck: Any, num_warps: int) -> int:
    """Programs per SM that fit (H100/H200: 64K registers, 64 warps, 228 KB shared memory per SM)."""
    regs = max(int(getattr(ck, "n_regs", 0) or 0), 1)
    per_warp = -(-regs * 32 // 256) * 256  # allocation granularity: 256 registers per warp
    by_regs = 65536 // (per_warp * num_warps)
    shared = int(getattr(getattr(ck, "metadata", None), "shared", 0) or 0)
    by_smem = 233472 // shared if shared else 64
    return max(1, min(64 // num_warps, by_regs, by_smem))


def _kernel_args(op: str, mod: Any, s: list, out: torch.Tensor) -> tuple[list, dict[str, Any]]:
    """Positional runtime args and fixed constexprs of the stage-3 forward kernel for one input set (2-D rows)."""
    if op == "rmsnorm":
        x, w = s
        M, N = x.shape
        return [x, w, out, out, M, N, N, N, mod.EPS], {"BLOCK_N": mod.triton.next_power_of_2(N), "STATS": False}
    if op == "layernorm":
        x, w, b = s
        M, N = x.shape
        return [x, out, w, b, out, out, M, N, N, N, mod.EPS], {"BLOCK_N": mod.triton.next_power_of_2(N),
                                                              "STATS": False}
    (x,) = s
    M, N = x.shape
    return [out, x, M, N, N, 1, N], {"BLOCK_N": mod.triton.next_power_of_2(N), "SINGLE": True}


def _kernel_of(op: str, mod: Any) -> Any:
    return {"rmsnorm": "rms_norm_fwd_kernel", "layernorm": "layer_norm_fwd_kernel",
            "softmax": "softmax_persistent_kernel"}[op]


def _timed(fn, moved: int, copy_gbps: float, host: bool) -> dict[str, Any]:
    import triton.testing

    fn()
    ms = float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))
    row = {"ms": round(ms, 5), "pct_copy": round(100 * moved / ms / 1e6 / copy_gbps, 1)}
    if host:
        row["host_ms"] = round(VL._host_ms(fn), 5)
    return row


def _point(op: str, shape: tuple, slice_s: float, baselines: bool, copy_gbps: float, deadline: float) -> dict:
    t0 = time.perf_counter()
    end = min(deadline, t0 + slice_s)
    mod = MODS[op]
    g = torch.Generator(device="cuda").manual_seed(0)
    first, diff = VL._make(op, shape, g)
    n_sets = max(1, min(4, (256 << 20) // max(VL._nbytes(first), 1)))
    sets = [first] + [VL._make(op, shape, g)[0] for _ in range(n_sets - 1)]
    with torch.no_grad():
        ref = VL.TORCH[op](*[t.float() for t in sets[0]]).to(sets[0][0].dtype)
    moved = VL._nbytes(sets[0]) + VL._nbytes(ref)
    rows: dict[str, dict[str, Any]] = {}

    def run(name: str, f, host: bool = True) -> None:
        if time.perf_counter() > end:
            rows[name] = {"skipped": "time slice spent"}
            return
        try:
            with torch.no_grad():
                ok, err = VL._close(f(*sets[0]), ref)
            if not ok:
                rows[name] = {"error": f"output differs from eager (max excess {err:.3g}); not timed"}
                return
            i = [0]

            def call():
                s = sets[i[0] % len(sets)]
                i[0] += 1
                with torch.no_grad():
                    return f(*s)
            rows[name] = _timed(call, moved, copy_gbps, host)
        except Exception as e:  # noqa: BLE001 - one variant failing must not hide the others
            rows[name] = {"error": f"{type(e).__name__}: {str(e)[:200]}", "trace": traceback.format_exc()[-600:]}

    run("stage3", getattr(mod, ENTRY[op]))
    if baselines:
        lf = VL._liger(op)
        if lf is not None:
            run("liger", lf)
        run("torch.compile", torch.compile(VL.TORCH[op], dynamic=False))
    # Fixed configs of the stage-3 kernel.
    kern = getattr(mod, _kernel_of(op, mod))
    jit = kern.fn if hasattr(kern, "fn") else kern
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    M = shape[0]
    outs = [torch.empty_like(s[0]) for s in sets]
    for v in _variants(op, mod.triton.next_power_of_2(shape[1])):
        name = f"R{v['ROWS']} w{v['num_warps']} {'pers' if v['PPS'] else 'plain'}{' late' if v['LATE_W'] else ''}"
        if time.perf_counter() > end:
            rows[name] = {"skipped": "time slice spent"}
            continue
        try:
            args0, consts = _kernel_args(op, mod, sets[0], outs[0])
            cfg = {"ROWS": v["ROWS"], "PPS": v["PPS"], **({"LATE_W": v["LATE_W"]} if op != "softmax" else {})}
            tiles = -(-M // v["ROWS"])
            grid0 = (tiles if not v["PPS"] else min(tiles, sms * v["PPS"]), 1, 1)
            ck = jit[grid0](*args0, **consts, **cfg, num_warps=v["num_warps"])
            torch.cuda.synchronize()
            info = {"regs": getattr(ck, "n_regs", None), "spills": getattr(ck, "n_spills", None)}
            ok, err = VL._close(outs[0], ref)
            if not ok:
                rows[name] = {"error": f"output differs (max excess {err:.3g}); not timed", **info}
                continue
            fl = mod._FastLaunch(jit)
            grids = [("", grid0)]
            if v["PPS"]:
                occ = _occupancy(ck, v["num_warps"])
                info["occupancy"] = occ
                for pps in sorted({occ, 2} - {v["PPS"]}):
                    grids.append((f" pps{pps}", (min(tiles, sms * pps), 1, 1)))
            for suffix, grid in grids:
                i = [0]

                def call(grid=grid, i=i, cfg=cfg, fl=fl, w=v["num_warps"]):
                    k = i[0] % len(sets)
                    i[0] += 1
                    a, c = _kernel_args(op, mod, sets[k], outs[k])
                    fl((tuple(sorted(cfg.items())), w), grid, *a, **c, **cfg, num_warps=w)
                rows[name + (suffix or (f" pps{v['PPS']}" if v["PPS"] else ""))] = {
                    **_timed(call, moved, copy_gbps, False), **info, "grid": grid[0]}
        except Exception as e:  # noqa: BLE001
            rows[name] = {"error": f"{type(e).__name__}: {str(e)[:200]}", "trace": traceback.format_exc()[-600:]}
    # Forward + backward of the wrapper at the norms' bench shapes.
    if baselines and op != "softmax" and shape == (8192, 8192) and time.perf_counter() < deadline:
        try:
            f = getattr(mod, ENTRY[op])
            leaves = [[t.detach().requires_grad_(j in diff) for j, t in enumerate(s)] for s in sets]
            cot = torch.randn(shape, device="cuda", generator=g).to(sets[0][0].dtype)
            i = [0]

            def fb():
                s = leaves[i[0] % len(leaves)]
                i[0] += 1
                return torch.autograd.grad([f(*s)], [s[j] for j in diff], [cot])
            rows["stage3 fwd+bwd"] = _timed(fb, moved, copy_gbps, True)
            rows["stage3 fwd+bwd"].pop("pct_copy")
        except Exception as e:  # noqa: BLE001
            rows["stage3 fwd+bwd"] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
    best = getattr(getattr(mod, _kernel_of(op, mod)), "best_config", None)
    return {"op": op, "shape": list(shape), "rows": rows, "autotuned": str(best), "wall_s": round(time.perf_counter()
                                                                                                 - t0, 1)}


def _table(points: list[dict]) -> str:
    lines = ["| op | shape | variant | ms | % copy | host ms | regs | spills | occ | grid |", "|" + "---|" * 10]
    for p in points:
        timed = sorted(((k, r) for k, r in p["rows"].items() if "ms" in r), key=lambda kr: kr[1]["ms"])
        fixed = {"stage3", "liger", "torch.compile", "stage3 fwd+bwd"}
        show = [kr for kr in timed if kr[0] in fixed] + [kr for kr in timed if kr[0] not in fixed][:6]
        for k, r in show:
            lines.append(f"| {p['op']} | {'x'.join(map(str, p['shape']))} | {k} | {r['ms']:.4f} | "
                         f"{r.get('pct_copy', '-')} | {r.get('host_ms', '-')} | {r.get('regs', '-')} | "
                         f"{r.get('spills', '-')} | {r.get('occupancy', '-')} | {r.get('grid', '-')} |")
        bad = [f"{k}: {r.get('error') or r.get('skipped')}" for k, r in p["rows"].items() if "ms" not in r]
        if bad:
            lines.append(f"| {p['op']} | {'x'.join(map(str, p['shape']))} | not timed: {len(bad)} | "
                         f"{'; '.join(b[:70] for b in bad[:3])} | | | | | | |")
        lines.append(f"| {p['op']} | {'x'.join(map(str, p['shape']))} | autotuner chose | {p['autotuned'][:90]} "
                     f"| | | | | | |")
    return "\n".join(lines)


def main(only: list[str] | None, budget_s: float) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    deadline = t_start + budget_s
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
    env = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "gpu": torch.cuda.get_device_name(),
           "torch": torch.__version__, "triton": __import__("triton").__version__, "liger": VL.LIGER or "ok"}
    env["copy_gbps"] = round(VL._copy_gbps(), 1)
    print(f"# {env}", flush=True)
    points: list[dict] = []
    results = {"environment": env, "method": __doc__, "points": points, "notes": []}
    plan = POINTS
    if only:
        want = {(o.split(":")[0], tuple(int(v) for v in o.split(":")[1].split("x"))) for o in only}
        plan = [(op, s, max(sl, 30), True) for op, s, sl, _ in POINTS if (op, s) in want]
    seen = set()
    for op, shape, slice_s, baselines in plan:
        if (op, shape) in seen or slice_s <= 0:
            continue
        seen.add((op, shape))
        if time.perf_counter() > deadline - 5:
            results["notes"].append(f"{op} {shape}: skipped, budget of {budget_s:.0f} s spent")
            continue
        try:
            pt = _point(op, shape, slice_s, baselines, env["copy_gbps"], deadline)
        except Exception as e:  # noqa: BLE001
            pt = {"op": op, "shape": list(shape), "rows": {"point": {"error": f"{type(e).__name__}: {e}"}},
                  "autotuned": "-", "wall_s": None}
        points.append(pt)
        print(f"== {op} {shape} ({pt['wall_s']} s): " + ", ".join(
            f"{k} {r['ms']:.4f}" for k, r in pt["rows"].items() if "ms" in r), flush=True)
        (OUT / "explore_norms.json").write_text(json.dumps(results, indent=2, default=str))
        torch.cuda.empty_cache()
    results["wall_s"] = round(time.perf_counter() - t_start, 1)
    (OUT / "explore_norms.json").write_text(json.dumps(results, indent=2, default=str))
    for n in results["notes"]:
        print(f"note: {n}")
    print(f"\n{env}  wall {results['wall_s']} s\n" + _table(points))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help="comma-separated op:MxN points, e.g. layernorm:16384x16384")
    ap.add_argument("--budget-s", type=float, default=170.0, help="stop starting new work after this many s")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("explore_norms.py times GPU kernels: no CUDA device here")
    main(a.only.split(",") if a.only else None, a.budget_s)
