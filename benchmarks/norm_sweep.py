"""The gallery's norms at candidate pins against torch.compile and Liger: the sweep whose "adopt:" lines fill each
stage 3's FWD_PINS / BWD_PINS (issues 38 and 47). Needs a CUDA GPU.

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/norm_sweep.py [--ops rmsnorm,layernorm]
        [--sizes 8192x8192,8192x1024] [--budget-s 150] [--min-gain 0.03]

Per op and size (bf16), fwd and fwd+bwd: stage 3 as shipped, torch.compile, Liger (vs_liger.py's baselines), then one
candidate pin at a time through the gallery's own entry point (plans reset between candidates). Every row is checked
against fp32 eager before do_bench times it. Prints the table, per op and size shipped and best against compile and
Liger, "adopt:" lines (>= --min-gain faster), and issue 47's acceptance; $OUT/norm_sweep.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import triton
import triton.testing

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("OUT", "/tmp/out"))
REP_MS = int(os.environ.get("EXPLORE_REP_MS", 50))
ROTATE = 2
SIZES = [(8192, 8192), (8192, 1024), (16384, 16384)]  # vs_liger.py's bench shape first
BENCH = (8192, 8192)  # the acceptance shape (vs_liger.py's OPS bench shape for both norms)
T0 = time.perf_counter()


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


VS = _load(ROOT / "benchmarks/vs_liger.py", "norm_sweep_vs_liger")  # the same eager/compile/Liger baselines


@dataclass
class Norm:
    """One gallery norm: its stage 3 module, entry point and the candidate configs to sweep."""

    op: str  # vs_liger.py's op name
    example: str
    entry: str
    fwd_candidates: Callable[[int], list[dict]]

    def module(self) -> Any:
        return _load(ROOT / "examples" / self.example / "stage3.py", f"norm_sweep_{self.op}_stage3")


def _rms_fwd(n: int) -> list[dict]:
    """rmsnorm FWD_PINS-form configs for rows of n columns."""
    if n <= 1024:
        return ([{"ROWS": r, "PPS": 0, "RBLOCK": 0, "num_warps": w} for r in (4, 8, 16) for w in (4, 8)]
                + [{"ROWS": 8, "PPS": 16, "RBLOCK": 0, "num_warps": 4}, {"ROWS": 16, "PPS": 8, "RBLOCK": 0, "num_warps": 8}])
    two_pass = [{"ROWS": 1, "PPS": 0, "RBLOCK": rb, "num_warps": w} for rb in (2048, 4096, 8192) for w in (8, 16, 32)
                if rb // (32 * w) >= 4 and 2 * rb <= n]  # 4+ elements per thread per step, 2+ steps per row
    one_pass = [{"ROWS": 1, "PPS": 0, "RBLOCK": 0, "num_warps": w, "LATE_W": late} for w in (16, 32)
                for late in (False, True)]
    return two_pass + one_pass


def _ln_fwd(n: int) -> list[dict]:
    """layernorm FWD_PINS-form configs for rows of n columns (one pass: x stays in registers)."""
    if n <= 1024:
        return ([{"ROWS": r, "PPS": 0, "LATE_W": False, "num_warps": w} for r in (4, 8, 16) for w in (4, 8)]
                + [{"ROWS": 8, "PPS": 16, "LATE_W": False, "num_warps": 4},
                   {"ROWS": 16, "PPS": 8, "LATE_W": False, "num_warps": 8}])
    return [{"ROWS": 1, "PPS": pps, "LATE_W": late, "num_warps": w} for w in (8, 16, 32) for late in (False, True)
            for pps in (0, 64 // w) if n // (32 * w) <= 64]


NORMS = {"rmsnorm": Norm("rmsnorm", "rmsnorm", "rms_norm", _rms_fwd),
         "layernorm": Norm("layernorm", "layernorm", "layer_norm", _ln_fwd)}


def bwd_candidates(n: int) -> list[tuple[int, int, int]]:
    """BWD_PINS-form (rows per step, programs per SM, num_warps) for rows of n columns: the shipped rows and its
    neighbours, 1-4 programs per SM, the warps that keep 4 to 64 fp32 values of a tile per thread."""
    base = max(1, min(16, 4096 // n))
    rows = sorted({base, max(1, base // 2), min(16, base * 2)}) if n <= 2048 else [1]
    return [(r, per_sm, w) for r in rows for per_sm in (1, 2, 4) for w in (4, 8, 16, 32)
            if 4 <= r * n // (32 * w) <= 64]


def elapsed() -> float:
    return time.perf_counter() - T0


def bench(fn: Callable[[], Any]) -> float:
    return float(triton.testing.do_bench(fn, warmup=10, rep=REP_MS, return_mode="median"))


def reset(mod: Any) -> None:
    """Forget every decision the module cached (plans, launch cache, autotuner choices) so the next call re-plans
    with the current pins."""
    mod._PLANS.clear()
    for obj in vars(mod).values():
        if isinstance(obj, mod._FastLaunch):
            obj.cache.clear()
        if hasattr(obj, "cache") and hasattr(obj, "configs"):  # an Autotuner: its key -> config choices
            obj.cache.clear()


def run_size(norm: Norm, mod: Any, M: int, N: int, rows: list[dict], deadline: float) -> None:
    """Every row of one op at one size."""
    eager, liger, fn = VS.TORCH[norm.op], VS._liger(norm.op), getattr(mod, norm.entry)
    g = torch.Generator(device="cuda").manual_seed(0)
    sets = [VS._make(norm.op, (M, N), g)[0] for _ in range(ROTATE)]
    cot = [torch.randn((M, N), device="cuda", generator=g).to(torch.bfloat16) for _ in range(ROTATE)]
    ins0 = sets[0]
    ref = eager(*[t.float() for t in ins0])
    leaves32 = [t.float().requires_grad_() for t in ins0]
    ref_g = torch.autograd.grad(eager(*leaves32), leaves32, cot[0].float())
    del leaves32
    leaves = [[t.detach().clone().requires_grad_() for t in s] for s in sets]
    size = f"{M}x{N}"
    torch._dynamo.reset()
    compiled = torch.compile(eager, dynamic=False)  # compiled for this shape alone (vs_liger.py: fair baseline)

    def record(impl: str, mode: str, check: Callable[[], float], timed: Callable[[], Any], cfg: Any = None) -> None:
        row = {"op": norm.op, "size": size, "impl": impl, "mode": mode, "config": cfg, "ms": None, "err": None,
               "note": ""}
        rows.append(row)
        if elapsed() > deadline:
            row["note"] = "skipped (time budget)"
            return
        try:
            row["err"] = err = check()
            if not err <= 5e-2:
                row["note"] = f"WRONG (err {err:.3g})"
            else:
                row["ms"] = bench(timed)
        except Exception as e:  # noqa: BLE001 - a config that fails is a row
            row["note"] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
        print(f"[{elapsed():5.1f}s] {norm.op:9s} {size:12s} {impl:8s} {mode:7s} {json.dumps(cfg) if cfg else ''} -> "
              f"{row['ms'] if row['ms'] is None else round(row['ms'], 5)} {row['note']}", flush=True)

    def out_err(f: Callable) -> float:  # bf16-level: relative 2e-2 plus 1e-4 of the largest value
        with torch.no_grad():
            out = f(*ins0).float()
        return ((out - ref).abs() - 2e-2 * ref.abs() - 1e-4 * ref.abs().max()).max().clamp_min(0).item()

    def grad_err(f: Callable) -> float:
        gs = torch.autograd.grad(f(*leaves[0]), leaves[0], cot[0])
        return max(((a.float() - r).abs().max() / r.abs().max()).item() for a, r in zip(gs, ref_g, strict=True))

    def fwd(f: Callable) -> Callable[[], Any]:
        state = [0]

        def call() -> Any:
            state[0] = (state[0] + 1) % ROTATE
            with torch.no_grad():
                return f(*sets[state[0]])
        return call

    def fwd_bwd(f: Callable) -> Callable[[], Any]:
        state = [0]

        def call() -> Any:
            state[0] = (state[0] + 1) % ROTATE
            s = leaves[state[0]]
            return torch.autograd.grad(f(*s), s, cot[state[0]])
        return call

    impls = {"stage3": fn, "compile": compiled, "liger": liger}
    bn = triton.next_power_of_2(N)
    for mode, check, wrap in (("fwd", out_err, fwd), ("fwd+bwd", grad_err, fwd_bwd)):
        for impl, f in impls.items():
            if f is None:
                rows.append({"op": norm.op, "size": size, "impl": impl, "mode": mode, "config": None, "ms": None,
                             "err": None, "note": f"skipped: {VS.LIGER}"})
            else:
                record(impl, mode, lambda f=f, check=check: check(f), wrap(f))
        # candidates through the gallery's own entry point, one pin at a time
        table, key, cands = ((mod.FWD_PINS, (bn, torch.bfloat16), norm.fwd_candidates(N)) if mode == "fwd" else
                             (mod.BWD_PINS, bn, bwd_candidates(N)))
        saved = table.get(key)
        try:
            for cand in cands:
                table[key] = cand
                reset(mod)
                record("cand", mode, lambda check=check: check(fn), wrap(fn), cand if mode == "fwd" else list(cand))
        finally:
            if saved is None:
                table.pop(key, None)
            else:
                table[key] = saved
            reset(mod)


def summary(rows: list[dict], min_gain: float) -> list[str]:
    """Print the table, the per-size verdicts and the adopt lines; returns the adopt lines."""
    print(f"\n=== norms bf16, do_bench medians (ms); {elapsed():.0f} s")
    print(f"{'op':9s} {'size':12s} {'impl':8s} {'mode':7s} {'ms':>8s}  config / note")
    for r in rows:
        ms = f"{r['ms']:.5f}" if r["ms"] is not None else "-"
        print(f"{r['op']:9s} {r['size']:12s} {r['impl']:8s} {r['mode']:7s} {ms:>8s}  "
              f"{json.dumps(r['config']) if r['config'] else ''} {r['note'][:80]}")
    print(f"\n=== per op and size: shipped and best stage 3 vs compile and Liger (x = their ms / ours); adopt lines "
          f"where a candidate beats the shipped path by {min_gain:.0%} or more")
    adopt: list[str] = []
    accept: list[str] = []
    for op, size in dict.fromkeys((r["op"], r["size"]) for r in rows):
        for mode in ("fwd", "fwd+bwd"):
            mine = [r for r in rows if r["op"] == op and r["size"] == size and r["mode"] == mode and r["ms"] is not None]
            base = {r["impl"]: r for r in mine if r["impl"] != "cand"}
            ship = base.get("stage3")
            best = min([r for r in mine if r["impl"] == "cand"] + ([ship] if ship else []), key=lambda r: r["ms"],
                       default=None)
            if best is None:
                print(f"{op:9s} {size:12s} {mode:7s} incomplete")
                continue

            def vs(r: dict, base: dict = base) -> str:
                return " ".join(f"{b} {base[b]['ms'] / r['ms']:.3f}x" for b in ("compile", "liger") if b in base)

            print(f"{op:9s} {size:12s} {mode:7s} shipped {ship['ms'] if ship else float('nan'):.5f} ms "
                  f"({vs(ship) if ship else '-'}) | best {best['impl']} {best['ms']:.5f} ms ({vs(best)}) "
                  f"{json.dumps(best['config'])}")
            won = ship is not None and best is not ship and best["ms"] <= ship["ms"] * (1 - min_gain)
            if won:
                n = int(size.split("x")[1])
                bn = triton.next_power_of_2(n)
                line = (f"adopt: {op} FWD_PINS[({bn}, torch.bfloat16)] = {best['config']}" if mode == "fwd" else
                        f"adopt: {op} BWD_PINS[{bn}] = {tuple(best['config'])}")
                line += f"  # {size}: {ship['ms']:.4f} -> {best['ms']:.4f} ms ({ship['ms'] / best['ms']:.2f}x)"
                adopt.append(line)
                print("    " + line)
            if mode == "fwd+bwd" and size == f"{BENCH[0]}x{BENCH[1]}" and ship and {"compile", "liger"} <= set(base):
                for label, r in (("shipped", ship), ("with adopted pins", best if won else ship)):
                    c, lg = base["compile"]["ms"] / r["ms"], base["liger"]["ms"] / r["ms"]
                    verdict = "PASS" if c >= 1.2 and lg >= 1.0 else "FAIL"
                    accept.append(f"acceptance: {op} {size} fwd+bwd {label} {r['ms']:.4f} ms: {c:.2f}x compile "
                                  f"(>= 1.2), {lg:.2f}x Liger (>= 1.0): {verdict}")
    print("\n=== issue 47 acceptance (bench shape, forward+backward)")
    for line in accept or ["acceptance: incomplete (a baseline or stage 3 row is missing)"]:
        print(line)
    return adopt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ops", default="rmsnorm,layernorm", help=f"comma-separated, from {','.join(NORMS)}")
    ap.add_argument("--sizes", default=",".join(f"{m}x{n}" for m, n in SIZES), help="MxN,... (bf16)")
    ap.add_argument("--budget-s", type=float, default=float(os.environ.get("EXPLORE_BUDGET_S", 150)))
    ap.add_argument("--min-gain", type=float, default=0.03, help="adopt a candidate this much faster than shipped")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("norm_sweep.py times GPU kernels: no CUDA device here")
    OUT.mkdir(parents=True, exist_ok=True)
    for name in ("recompile_limit", "cache_size_limit"):  # one compile per (op, size): more than the default 8
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
    ops = [NORMS[o] for o in a.ops.split(",")]
    sizes = [tuple(int(v) for v in s.split("x")) for s in a.sizes.split(",")]
    print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}, "
          f"liger: {'yes' if VS.LF is not None else VS.LIGER}", flush=True)
    rows: list[dict] = []
    for i, norm in enumerate(ops):
        deadline = a.budget_s * (i + 1) / len(ops)  # each op its share; time an op leaves goes to the next
        mod = norm.module()
        for M, N in sizes:
            run_size(norm, mod, M, N, rows, deadline)
            torch.cuda.empty_cache()
    adopt = summary(rows, a.min_gain)
    (OUT / "norm_sweep.json").write_text(json.dumps({"rows": rows, "adopt": adopt, "env": {
        "torch": torch.__version__, "triton": triton.__version__, "gpu": torch.cuda.get_device_name(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
