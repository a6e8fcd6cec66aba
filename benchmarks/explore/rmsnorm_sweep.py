"""RMSNorm stage 3 configs against torch.compile and Liger at every gallery size, forward and forward+backward
(issue 38: forward was 0.99x compile at 8192 x 8192 bf16 on the H200).

For each gallery size (vs_liger.py's bench shape and sweep: 8192x8192, 8192x1024, 16384x16384, bf16):
- forward (no_grad): stage 3 as shipped, torch.compile and Liger (vs_liger.py's own baselines), then stage 3's
  forward kernel launched directly at candidate configs (two passes of RBLOCK columns, one-pass row tiles,
  persistent grids) -- the stage3.FWD_PINS entries a winner would become;
- forward+backward (autograd, a fixed random cotangent): the same three, then stage 3 with candidate backward plans
  put into stage3.BWD_PINS one at a time (rows per step, programs per SM, num_warps).
Every row is checked against the fp32 eager result before it is timed (bf16 tolerance); triton.testing.do_bench
medians (L2 flushed before every run), inputs rotated over ROTATE sets. EXPLORE_BUDGET_S (default 75) bounds the
run: rows past it are reported as skipped. Writes $OUT/rmsnorm_sweep.json; prints the table, then per size the best
against compile and Liger and the FWD_PINS / BWD_PINS line to adopt where a candidate beats the shipped path.

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/explore/rmsnorm_sweep.py
Needs a CUDA GPU (the gallery's rmsnorm is validated on the CPU by the test suite, not here).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import torch
import triton
import triton.testing

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("OUT", "/tmp/out"))
BUDGET_S = float(os.environ.get("EXPLORE_BUDGET_S", 75))
REP_MS = int(os.environ.get("EXPLORE_REP_MS", 50))
ROTATE = 2
SIZES = [(8192, 8192), (8192, 1024), (16384, 16384)]  # the miss first
T0 = time.perf_counter()


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ST3 = _load(ROOT / "examples/rmsnorm/stage3.py", "rms_stage3")
VS = _load(ROOT / "benchmarks/vs_liger.py", "rms_vs_liger")  # the same eager/compile/Liger baselines


def fwd_candidates(n: int) -> list[dict]:
    """FWD_PINS-form configs for rows of n columns."""
    if n == 1024:
        return ([{"ROWS": r, "PPS": 0, "RBLOCK": 0, "num_warps": w} for r in (4, 8, 16) for w in (4, 8)]
                + [{"ROWS": 8, "PPS": 16, "RBLOCK": 0, "num_warps": 4}, {"ROWS": 16, "PPS": 8, "RBLOCK": 0, "num_warps": 8}])
    two_pass = [{"ROWS": 1, "PPS": 0, "RBLOCK": rb, "num_warps": w} for rb in (2048, 4096, 8192) for w in (8, 16, 32)
                if rb // (32 * w) >= 4]  # at least 4 elements per thread per step
    one_pass = [{"ROWS": 1, "PPS": 0, "RBLOCK": 0, "num_warps": w, "LATE_W": late} for w in (16, 32)
                for late in (False, True)]
    return two_pass + one_pass


def bwd_candidates(n: int) -> list[tuple[int, int, int]]:
    """BWD_PINS-form (rows per step, programs per SM, num_warps) for rows of n columns."""
    rows = max(1, min(16, 4096 // n))  # the shipped rule
    warps = (4, 8) if n <= 1024 else (8, 16) if n <= 8192 else (16, 32)
    return [(rows, per_sm, w) for per_sm in (1, 2, 4) for w in warps]


def elapsed() -> float:
    return time.perf_counter() - T0


def bench(fn) -> float:
    return float(triton.testing.do_bench(fn, warmup=10, rep=REP_MS, return_mode="median"))


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    eager = VS.TORCH["rmsnorm"]
    liger = VS._liger("rmsnorm")
    print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}, "
          f"liger: {'yes' if liger else VS.LIGER}", flush=True)
    for M, N in SIZES:
        run_size(M, N, rows, eager, liger)
        torch.cuda.empty_cache()
    summary(rows)


def run_size(M: int, N: int, rows: list[dict], eager, liger) -> None:
    """Every row of one gallery size."""
    g = torch.Generator(device="cuda").manual_seed(0)
    sets = [VS._make("rmsnorm", (M, N), g)[0] for _ in range(ROTATE)]
    cot = [torch.randn((M, N), device="cuda", generator=g).to(torch.bfloat16) for _ in range(ROTATE)]
    x0, w0 = sets[0]
    ref = eager(x0.float(), w0.float())
    xg, wg = x0.float().requires_grad_(), w0.float().requires_grad_()
    ref_g = torch.autograd.grad(eager(xg, wg), (xg, wg), cot[0].float())
    del xg, wg
    leaves = [[t.detach().clone().requires_grad_() for t in s] for s in sets]
    size = f"{M}x{N}"
    compiled = torch.compile(eager)

    def record(impl: str, mode: str, check, fn, cfg=None) -> dict:
        row = {"size": size, "impl": impl, "mode": mode, "config": cfg, "ms": None, "err": None, "note": ""}
        rows.append(row)
        if elapsed() > BUDGET_S:
            row["note"] = "skipped (time budget)"
            return row
        try:
            row["err"] = err = check()
            if not err <= 5e-2:
                row["note"] = f"WRONG (err {err:.3g})"
            else:
                row["ms"] = bench(fn)
        except Exception as e:  # noqa: BLE001 - a config that fails is a row
            row["note"] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
        print(f"[{elapsed():5.1f}s] {size:12s} {impl:10s} {mode:7s} {json.dumps(cfg) if cfg else ''} -> "
              f"{row['ms'] if row['ms'] is None else round(row['ms'], 5)} {row['note']}", flush=True)
        return row

    def err_of(out, r) -> float:  # bf16-level: relative 2e-2 plus 1e-4 of the largest value
        return ((out.float() - r).abs() - 2e-2 * r.abs() - 1e-4 * r.abs().max()).max().clamp_min(0).item()

    def fwd(fn):
        state = [0]

        def f():
            state[0] = (state[0] + 1) % ROTATE
            with torch.no_grad():
                return fn(*sets[state[0]])
        return f

    def fwd_bwd(fn):
        state = [0]

        def f():
            state[0] = (state[0] + 1) % ROTATE
            s = leaves[state[0]]
            return torch.autograd.grad(fn(*s), s, cot[state[0]])
        return f

    def grad_err(fn) -> float:
        gs = torch.autograd.grad(fn(*leaves[0]), leaves[0], cot[0])
        return max(((a.float() - r).abs().max() / r.abs().max()).item() for a, r in zip(gs, ref_g))

    impls = {"stage3": ST3.rms_norm, "compile": compiled, "liger": liger}
    for impl, fn in impls.items():
        if fn is None:
            rows.append({"size": size, "impl": impl, "mode": "fwd", "config": None, "ms": None, "err": None,
                         "note": f"skipped: {VS.LIGER}"})
            continue
        with torch.no_grad():
            record(impl, "fwd", lambda fn=fn: err_of(fn(x0, w0), ref), fwd(fn))

    # forward candidates: stage 3's kernel at explicit configs (no autotuning), STATS off as in inference
    y = torch.empty_like(x0)
    kern = ST3.rms_norm_fwd_kernel.fn
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for cfg in fwd_candidates(N):
        meta = {k: v for k, v in cfg.items() if k != "num_warps"}
        tiles = triton.cdiv(M, cfg["ROWS"])
        grid = (tiles if cfg["PPS"] == 0 else min(tiles, sms * cfg["PPS"]),)

        def launch(x, w, meta=meta, grid=grid, warps=cfg["num_warps"]):
            kern[grid](x, w, y, y, M, N, N, N, ST3.EPS, BLOCK_N=triton.next_power_of_2(N), STATS=False,
                       num_warps=warps, **meta)
            return y

        record("cand", "fwd", lambda launch=launch: err_of(launch(x0, w0), ref), fwd(launch), cfg)

    for impl, fn in impls.items():
        if fn is not None:
            record(impl, "fwd+bwd", lambda fn=fn: grad_err(fn), fwd_bwd(fn))
    # backward candidates through the gallery's own autograd path, one BWD_PINS entry at a time
    bn = triton.next_power_of_2(N)
    saved = ST3.BWD_PINS.get(bn)
    try:
        for cand in bwd_candidates(N):
            ST3.BWD_PINS[bn] = cand
            record("cand", "fwd+bwd", lambda: grad_err(ST3.rms_norm), fwd_bwd(ST3.rms_norm), list(cand))
    finally:
        if saved is None:
            ST3.BWD_PINS.pop(bn, None)
        else:
            ST3.BWD_PINS[bn] = saved
    (OUT / "rmsnorm_sweep.json").write_text(json.dumps({"rows": rows}, indent=1))


def summary(rows: list[dict]) -> None:
    print(f"\n=== rmsnorm bf16, do_bench medians (ms); {elapsed():.0f} s")
    print(f"{'size':12s} {'impl':8s} {'mode':7s} {'ms':>8s}  config / note")
    for r in rows:
        ms = f"{r['ms']:.5f}" if r["ms"] is not None else "-"
        print(f"{r['size']:12s} {r['impl']:8s} {r['mode']:7s} {ms:>8s}  {json.dumps(r['config']) if r['config'] else ''} "
              f"{r['note'][:80]}")
    print("\n=== per size: shipped and best stage 3 vs compile and Liger (x = their ms / ours); lines to adopt")
    for M, N in SIZES:
        size = f"{M}x{N}"
        for mode in ("fwd", "fwd+bwd"):
            ok = {r["impl"]: r for r in rows if r["size"] == size and r["mode"] == mode and r["ms"] is not None
                  and r["impl"] != "cand"}
            cands = [r for r in rows if r["size"] == size and r["mode"] == mode and r["ms"] is not None
                     and r["impl"] == "cand"]
            ship = ok.get("stage3")
            best = min(cands + ([ship] if ship else []), key=lambda r: r["ms"], default=None)
            if best is None:
                print(f"{size:12s} {mode:7s} incomplete")
                continue

            def vs(r, ok=ok):
                return " ".join(f"{b} {ok[b]['ms'] / r['ms']:.3f}x" for b in ("compile", "liger") if b in ok)

            print(f"{size:12s} {mode:7s} shipped {ship['ms'] if ship else float('nan'):.5f} ms ({vs(ship) if ship else '-'})"
                  f" | best {best['impl']} {best['ms']:.5f} ms ({vs(best)}) {json.dumps(best['config'])}")
            if ship and best is not ship and best["ms"] < ship["ms"]:
                bn = triton.next_power_of_2(N)
                if mode == "fwd":
                    print(f"    adopt: FWD_PINS[({bn}, torch.bfloat16)] = {best['config']}")
                else:
                    print(f"    adopt: BWD_PINS[{bn}] = {tuple(best['config'])}")


if __name__ == "__main__":
    if not torch.cuda.is_available():
        sys.exit("rmsnorm_sweep.py needs a CUDA GPU")
    sys.exit(main())
