"""examples/conv_epilogue_pool stage 3's plans against torch.compile at the KernelBench size: the sweep whose "adopt:"
line fills stage3.PLANS (issue 47). Needs a CUDA GPU.

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/conv_sweep.py [--budget-s 100] [--min-gain 0.03]

KernelBench L2 35 at 128 x 64 x 128 x 128 fp32 (cuDNN in TF32, PyTorch's default): eager, torch.compile and stage 3
as shipped, then each plan: igemm tiles and cuDNN + a Triton epilogue, on NCHW and channels-last input. Every row is
checked against eager before do_bench times it. Prints the table, "adopt: PLANS[...] = {...}" and "acceptance: ...
>= 1.0x torch.compile: PASS|FAIL" for the shipped and the adopted plan; $OUT/conv_sweep.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch
import triton
import triton.testing

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "conv_epilogue_pool"
OUT = Path(os.environ.get("OUT", "/tmp/out"))
T0 = time.perf_counter()


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def candidates(st3: Any) -> list[dict]:
    """Every plan to time: igemm over the tile configs (NCHW and channels-last), cudnn both ways."""
    tiles = [{"BLOCK_CO": c.kwargs["BLOCK_CO"], "BLOCK_WIN": c.kwargs["BLOCK_WIN"], "BLOCK_CI": c.kwargs["BLOCK_CI"],
              "num_warps": c.num_warps, "num_stages": c.num_stages} for c in st3._IGEMM]
    plans = [{"path": "igemm", "channels_last": cl, **t} for cl in (True, False) for t in tiles]
    return plans + [{"path": "cudnn", "channels_last": cl} for cl in (True, False)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget-s", type=float, default=float(os.environ.get("EXPLORE_BUDGET_S", 100)))
    ap.add_argument("--min-gain", type=float, default=0.03)
    ap.add_argument("--rep-ms", type=int, default=100)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("conv_sweep.py times GPU kernels: no CUDA device here")
    OUT.mkdir(parents=True, exist_ok=True)
    ref = _load(EXAMPLE / "reference.py", "conv_sweep_reference")
    st3 = _load(EXAMPLE / "stage3.py", "conv_sweep_stage3")
    torch.manual_seed(0)
    init = ref.get_init_inputs()
    model = ref.Model(*init).cuda().eval()
    x = ref.get_inputs()[0].cuda()
    w, b, sub, P = model.conv.weight, model.conv.bias, float(init[3]), int(init[4])
    key = (x.shape[1], w.shape[0], w.shape[2], P)
    print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}, "
          f"cudnn.allow_tf32={torch.backends.cudnn.allow_tf32}; x {tuple(x.shape)}, PLANS key {key}", flush=True)
    with torch.no_grad():
        want = model(x)
    compiled = torch.compile(model, dynamic=False)
    rows: list[dict] = []

    def record(impl: str, fn: Any, plan: dict | None = None) -> dict:
        row = {"impl": impl, "plan": plan, "ms": None, "err": None, "note": ""}
        rows.append(row)
        if time.perf_counter() - T0 > a.budget_s:
            row["note"] = "skipped (time budget)"
            return row
        try:
            with torch.no_grad():
                got = fn()
                row["err"] = err = ((got - want).abs() - 1e-2 - 1e-2 * want.abs()).max().clamp_min(0).item()
                if err > 0:
                    row["note"] = f"WRONG (excess {err:.3g})"
                else:
                    row["ms"] = float(triton.testing.do_bench(fn, warmup=25, rep=a.rep_ms, return_mode="median"))
        except Exception as e:  # noqa: BLE001 - a plan that fails is a row
            row["note"] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:140] if str(e) else ''}"
        print(f"[{time.perf_counter() - T0:5.1f}s] {impl:8s} {json.dumps(plan) if plan else '':118s} -> "
              f"{'-' if row['ms'] is None else round(row['ms'], 4)} {row['note']}", flush=True)
        return row

    record("eager", lambda: model(x))
    record("compile", lambda: compiled(x))
    shipped = record("stage3", lambda: st3.conv_epilogue_pool(x, w, b, sub, P), st3.plan_for(*key))
    for plan in candidates(st3):
        record("cand", lambda plan=plan: st3.conv_epilogue_pool(x, w, b, sub, P, plan), plan)
    summary(rows, shipped, key, a.min_gain)
    (OUT / "conv_sweep.json").write_text(json.dumps({"rows": rows, "key": list(key), "env": {
        "torch": torch.__version__, "triton": triton.__version__, "gpu": torch.cuda.get_device_name(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}}, indent=1))
    return 0


def summary(rows: list[dict], shipped: dict, key: tuple, min_gain: float) -> None:
    """The verdicts: best plan per path, the adopt line, the acceptance lines."""
    base = {r["impl"]: r["ms"] for r in rows if r["impl"] in ("eager", "compile") and r["ms"]}
    timed = [r for r in rows if r["impl"] == "cand" and r["ms"]]
    print(f"\n=== conv_epilogue_pool stage 3 plans, do_bench medians (ms); {time.perf_counter() - T0:.0f} s; "
          f"eager {base.get('eager', float('nan')):.4f}, compile {base.get('compile', float('nan')):.4f}")
    for path in ("igemm", "cudnn"):
        for cl in (True, False):
            mine = [r for r in timed if r["plan"]["path"] == path and r["plan"]["channels_last"] == cl]
            if mine:
                r = min(mine, key=lambda r: r["ms"])
                vs = f"{base['compile'] / r['ms']:.3f}x compile" if "compile" in base else ""
                print(f"best {path:5s} {'channels-last' if cl else 'NCHW':13s} {r['ms']:.4f} ms {vs}  {json.dumps(r['plan'])}")
    best = min(timed + ([shipped] if shipped["ms"] else []), key=lambda r: r["ms"], default=None)
    if best is None:
        print("acceptance: conv stage 3: nothing timed")
        return
    won = shipped["ms"] is not None and best is not shipped and best["ms"] <= shipped["ms"] * (1 - min_gain)
    if won or (shipped["ms"] is None and best is not shipped):
        print(f"adopt: PLANS[{key}] = {best['plan']}  # {best['ms']:.4f} ms (shipped "
              f"{shipped['ms'] if shipped['ms'] is None else round(shipped['ms'], 4)})")
    if "compile" in base:
        for label, r in (("shipped", shipped), ("with the adopted plan", best if won else shipped)):
            if r["ms"]:
                x = base["compile"] / r["ms"]
                print(f"acceptance: conv stage 3 {label} {r['ms']:.4f} ms vs torch.compile {base['compile']:.4f} ms: "
                      f"{x:.2f}x (>= 1.0): {'PASS' if x >= 1.0 else 'FAIL'}")


if __name__ == "__main__":
    sys.exit(main())
