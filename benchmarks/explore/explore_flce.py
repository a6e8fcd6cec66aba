"""Fused linear + cross-entropy stage 3 variants beside Liger-Kernel and torch.compile on the GPU (issue 20).

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/explore/explore_flce.py [--budget-s 240]

At 8192x4096x128256 (the bench shape) and 4096x4096x32000, bf16, inputs from benchmarks/vs_liger.py's `_make`:
- forward under no_grad and forward+backward (torch.autograd.grad with a random cotangent, as vs_liger.py);
- stage 3 variants: the module's default tiles, other tile configs per matmul role (logits / dx / dw), FLATTEN off,
  a chunk cap (2^28 logits: 4 chunks and the fp32 dW running sum at the bench shape);
- Liger's liger_fused_linear_cross_entropy and torch.compile of the eager baseline
  F.cross_entropy((x @ w.t()).float(), t, ignore_index=-100).
Every implementation is checked against eager first (loss within 1e-2 relative; with gradients, dx and dW within
5e-2 of their max abs value, bf16 level) and not timed if it misses. Timing: triton.testing.do_bench median
(warmup 25 ms, rep 100 ms), one repeat; TFLOP/s = 2 BT H V (forward) or 6 BT H V (with gradients) / time.
Writes $OUT/explore_flce.json and prints a table last. Stops starting new rows once the budget is spent.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
OUT = Path(os.environ.get("OUT") or "/tmp/out")

import vs_liger as VL  # noqa: E402 - after the path insert: the same inputs, baselines and loader

SHAPES = [(8192, 4096, 128256), (4096, 4096, 32000)]
SMALL_SHAPE_VARIANTS = ("s3 default", "s3 noflatten", "s3 logits 128x128 s4")
BASE = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3, FLATTEN=True)


def _variants() -> dict[str, dict[str, Any]]:
    """name -> {"configs": {role: cfg}, "chunk": MAX_CHUNK_LOGITS}; roles not given keep BASE."""
    c = lambda **kw: {**BASE, **kw}  # noqa: E731
    return {
        "s3 default": {},
        "s3 noflatten": {"configs": {r: c(FLATTEN=False) for r in ("logits", "dx", "dw")}},
        "s3 stages4": {"configs": {r: c(num_stages=4) for r in ("logits", "dx", "dw")}},
        "s3 logits 128x128 s4": {"configs": {"logits": c(BLOCK_N=128, num_stages=4)}},
        "s3 logits 256x128": {"configs": {"logits": c(BLOCK_M=256, BLOCK_N=128)}},
        "s3 group16": {"configs": {r: c(GROUP_M=16) for r in ("logits", "dx", "dw")}},
        "s3 chunk 2^28": {"chunk": 2**28},
        "s3 chunk 2^29": {"chunk": 2**29},
    }


def _stage3_with(mod: Any, spec: dict[str, Any]) -> Callable:
    """The stage-3 entry point run with one variant's module settings (restored after each call)."""
    def fn(x, w, t):
        saved = ({k: dict(v) for k, v in mod.CONFIGS.items()}, mod.MAX_CHUNK_LOGITS)
        for role in ("logits", "dx", "dw"):
            mod.CONFIGS[role] = dict(BASE)
        mod.CONFIGS.update(spec.get("configs", {}))
        mod.MAX_CHUNK_LOGITS = spec.get("chunk")
        try:
            return mod.fused_linear_cross_entropy(x, w, t)
        finally:
            mod.CONFIGS.clear()
            mod.CONFIGS.update(saved[0])
            mod.MAX_CHUNK_LOGITS = saved[1]
    return fn


def _check(fn: Callable, ins: list, ref: dict[str, torch.Tensor], backward: bool) -> str | None:
    """None when fn matches eager, else why not."""
    x, w, t = ins
    if backward:
        xl, wl = x.detach().requires_grad_(True), w.detach().requires_grad_(True)
        loss = fn(xl, wl, t)
        dx, dw = torch.autograd.grad(loss, [xl, wl], ref["cot"])
    else:
        with torch.no_grad():
            loss = fn(x, w, t)
    rel = abs(loss.float().item() - ref["loss"].item()) / max(abs(ref["loss"].item()), 1e-6)
    if not rel <= 1e-2:
        return f"loss {loss.float().item():.6g} vs eager {ref['loss'].item():.6g} (rel {rel:.3g})"
    if backward:
        for name, g, r in (("dx", dx, ref["dx"]), ("dW", dw, ref["dw"])):
            err = ((g.float() - r.float()).abs().max() / r.float().abs().max().clamp_min(1e-30)).item()
            if not err <= 5e-2:
                return f"{name} max abs error {err:.3g} of its max abs value"
    return None


def _point(shape: tuple, backward: bool, impls: dict[str, Callable], t_end: float) -> dict[str, dict[str, Any]]:
    import triton.testing

    g = torch.Generator(device="cuda").manual_seed(0)
    ins, _ = VL._make("flce", shape, g)
    x, w, t = ins
    eager = VL.TORCH["flce"]
    ref: dict[str, torch.Tensor] = {}
    if backward:
        xl, wl = x.detach().requires_grad_(True), w.detach().requires_grad_(True)
        loss = eager(xl, wl, t)
        ref["cot"] = torch.randn((), device="cuda", generator=g).to(loss.dtype)
        ref["dx"], ref["dw"] = torch.autograd.grad(loss, [xl, wl], ref["cot"])
        ref["loss"] = loss.detach().float()
        del xl, wl, loss
    else:
        with torch.no_grad():
            ref["loss"] = eager(x, w, t).float()
    torch.cuda.empty_cache()
    BT, H, V = shape
    flop = (6 if backward else 2) * BT * H * V
    rows: dict[str, dict[str, Any]] = {}
    torch.cuda.reset_peak_memory_stats()
    for name, fn in impls.items():
        if not backward and "chunk" in name:
            continue  # without gradients nothing is chunked: the same kernels as "s3 default"
        if shape != SHAPES[0] and name.startswith("s3 ") and name not in SMALL_SHAPE_VARIANTS:
            continue  # the tile sweep runs at the bench shape only (time budget)
        if time.perf_counter() > t_end:
            rows[name] = {"skipped": "time budget spent"}
            continue
        t0 = time.perf_counter()
        try:
            bad = _check(fn, ins, ref, backward)
            if bad:
                rows[name] = {"error": f"wrong: {bad}; not timed"}
                continue
            if backward:
                xl, wl = x.detach().requires_grad_(True), w.detach().requires_grad_(True)
                cot = ref["cot"]

                def call(fn=fn, xl=xl, wl=wl, cot=cot):
                    return torch.autograd.grad(fn(xl, wl, t), [xl, wl], cot)
            else:
                def call(fn=fn):
                    with torch.no_grad():
                        return fn(x, w, t)
            ms = float(triton.testing.do_bench(call, warmup=VL.WARMUP_MS, rep=VL.REP_MS, return_mode="median"))
            rows[name] = {"median_ms": round(ms, 4), "tflops": round(flop / ms / 1e9, 1),
                          "peak_gb": round(torch.cuda.max_memory_allocated() / 1e9, 2)}
        except torch.OutOfMemoryError as e:
            rows[name] = {"error": f"out of memory: {str(e)[:160]}"}
        except Exception as e:  # noqa: BLE001 - one variant failing must not hide the others
            rows[name] = {"error": f"{type(e).__name__}: {str(e)[:300]}", "trace": traceback.format_exc()[-1200:]}
        finally:
            call = xl = wl = None  # noqa: F841
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            rows.setdefault(name, {})["wall_s"] = round(time.perf_counter() - t0, 1)
        print(f"  {'x'.join(map(str, shape))} {'fwd+bwd' if backward else 'fwd'} {name}: {rows[name]}", flush=True)
    return rows


def main(budget_s: float) -> None:
    """Time every variant and baseline, write JSON, print the table."""
    OUT.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
    mod = VL._load(ROOT / "examples" / "fused_linear_cross_entropy" / "stage3.py", "flce_stage3_explore")
    # Baselines first: if the budget runs out, the variants at the end of the sweep go, not the comparison.
    impls: dict[str, Callable] = {"torch.compile": torch.compile(VL.TORCH["flce"])}
    if VL.LF is not None:
        impls["liger"] = VL._liger("flce")
    impls.update({n: _stage3_with(mod, s) for n, s in _variants().items()})
    env = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "gpu": torch.cuda.get_device_name(),
           "torch": torch.__version__, "triton": __import__("triton").__version__, "liger": VL.LIGER or "ok"}
    print(f"# {env}", flush=True)
    results: dict[str, Any] = {"environment": env, "method": __doc__, "points": []}
    # Bench shape first (fwd, fwd+bwd), then the small shape: the acceptance rows fill before the rest.
    plan = [(s, b) for s in SHAPES for b in (False, True)]
    t_end = t_start + budget_s
    for shape, backward in plan:
        if time.perf_counter() > t_end:
            break
        rows = _point(shape, backward, impls, t_end)
        results["points"].append({"shape": list(shape), "mode": "fwd+bwd" if backward else "fwd", "impls": rows})
        (OUT / "explore_flce.json").write_text(json.dumps(results, indent=2, default=str))
    results["wall_s"] = round(time.perf_counter() - t_start, 1)
    (OUT / "explore_flce.json").write_text(json.dumps(results, indent=2, default=str))
    errors = [(p["mode"], "x".join(map(str, p["shape"])), n, r["error"]) for p in results["points"]
              for n, r in p["impls"].items() if "error" in r]
    for mode, shape, n, e in errors:
        print(f"ERR {shape} {mode} {n}: {e[:400]}")
    lines = [f"\n{env} wall {results['wall_s']} s", "| shape | mode | impl | ms | TFLOP/s | peak GB | vs liger | "
             "vs compile |", "|---|---|---|---|---|---|---|---|"]
    for p in results["points"]:
        im = p["impls"]
        for n, r in im.items():
            ms = r.get("median_ms")

            def ratio(other: str, ms: float | None = ms, im: dict = im) -> str:
                o = im.get(other, {}).get("median_ms")
                return f"{o / ms:.3f}x" if ms and o else "-"
            lines.append(f"| {'x'.join(map(str, p['shape']))} | {p['mode']} | {n} | "
                         f"{ms if ms is not None else ('ERR' if 'error' in r else 'skip')} | {r.get('tflops', '-')} | "
                         f"{r.get('peak_gb', '-')} | {ratio('liger')} | {ratio('torch.compile')} |")
    print("\n".join(lines))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget-s", type=float, default=240.0, help="stop starting new rows after this many s")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("explore_flce.py times GPU kernels: no CUDA device here")
    main(a.budget_s)
