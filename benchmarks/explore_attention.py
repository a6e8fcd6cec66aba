"""Flash attention on the GPU (issue 20 item 4, round 2): Hopper forward variants of stage 3 against SDPA.

For each combo (causal / non-causal x head dim 64 / 128) at B4 H32 S4096 bf16: SDPA default (cuDNN on the
H200), forward and forward+backward; stage 3 as the gallery runs it (round-1 winners, BEST_CONFIGS in
stage3.py), forward and forward+backward; then stage 3's TMA forward (attention_fwd_tma_kernel): host 4-D
descriptors over TMA_SWEEP; at the best config the 2-D (tutorial) descriptors and in-kernel (device) descriptors,
then warp specialization, then a persistent grid (1 and 2 programs per SM) at the best setting so far; and
forward+backward with the best TMA forward (backward at the round-1 winners).
Each variant is checked against a float32 SDPA reference before it is timed. TFLOP/s: forward 4*B*H*S*S*D, halved
when causal; fwd+bwd 3.5x the forward. Prints the table last and writes $OUT/explore_attention.json.

Run from the repo root: PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/explore_attention.py
(EXPLORE_BUDGET_S, default 200: variants past it are reported as skipped.)
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path

import torch
import torch.nn.functional as F
import triton

ROOT = Path(__file__).resolve().parent.parent
BUDGET_S = float(os.environ.get("EXPLORE_BUDGET_S", 200))  # variants past the budget are reported as skipped
B, H, S = 4, 32, 4096
# Without a GPU (a logic check under TRITON_INTERPRET=1): tiny sizes, one timed call instead of do_bench.
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    B, H, S = 1, 2, 128
COMBOS = [(True, 128), (True, 64), (False, 128), (False, 64)]  # (causal, head dim)
# TMA forward configs (BLOCK_M, BLOCK_N, num_warps, num_stages): BLOCK_N 128 at 3-4 stages, and 64.
TMA_SWEEP = [(128, 128, 8, 3), (128, 128, 8, 4), (128, 64, 8, 3), (128, 64, 8, 4)]
FWD_TOL = 2e-2  # max abs error vs the float32 reference
GRAD_TOL = 5e-2  # max abs error / max abs of the float32 reference gradient
OUT = Path(os.environ.get("OUT", "/tmp/out"))
T0 = time.perf_counter()


def elapsed() -> float:
    return time.perf_counter() - T0


def load_stage3():
    spec = importlib.util.spec_from_file_location("fa_stage3", ROOT / "examples/flash_attention/stage3.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def bench(fn) -> float:
    if DEVICE == "cpu":
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e3
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def flops(causal: bool, d: int, bwd: bool) -> float:
    f = 4.0 * B * H * S * S * d / (2 if causal else 1)
    return f * 3.5 if bwd else f


def fwd_err(o: torch.Tensor, ref: torch.Tensor) -> float:
    return (o.float() - ref).abs().max().item()


def grad_err(gs, refs) -> float:
    return max(((g.float() - r).abs().max() / r.abs().max().clamp_min(1e-6)).item() for g, r in zip(gs, refs))


def run_combo(causal: bool, d: int, st3, rows: list[dict]) -> None:
    """SDPA default, stage 3 (round 1) and the TMA variants for one (causal, head dim); appends to rows."""

    combo = f"{'causal' if causal else 'noncausal'} D{d}"
    g = torch.Generator(device=DEVICE).manual_seed(0)
    q, k, v, do = (torch.randn((B, H, S, d), device=DEVICE, dtype=torch.bfloat16, generator=g)
                   for _ in range(4))
    # float32 reference (SDPA picks its efficient or math kernel for fp32) on the same bf16 values.
    qf, kf, vf = (t.float().requires_grad_() for t in (q, k, v))
    ref_o = F.scaled_dot_product_attention(qf, kf, vf, is_causal=causal)
    ref_g = torch.autograd.grad(ref_o, (qf, kf, vf), do.float())
    ref_o = ref_o.detach()
    del qf, kf, vf
    qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))

    def record(name: str, mode: str, fn_check, fn_time, cfg=None) -> dict:
        row = {"combo": combo, "variant": name, "mode": mode, "config": cfg, "ms": None, "tflops": None,
               "err": None, "note": ""}
        rows.append(row)
        if elapsed() > BUDGET_S:
            row["note"] = "skipped (time budget)"
            return row
        try:
            err = fn_check()
            row["err"] = err
            if err > (FWD_TOL if mode == "fwd" else GRAD_TOL) or err != err:
                row["note"] = f"WRONG (err {err:.3g})"
                return row
            ms = bench(fn_time)
            row["ms"], row["tflops"] = ms, flops(causal, d, mode == "fwd+bwd") / ms * 1e-9
        except Exception as e:  # noqa: BLE001
            row["note"] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:90] if str(e) else ''}"
        print(f"[{elapsed():6.1f}s] {combo:14s} {name:22s} {mode:8s} {cfg} -> {row['ms']} {row['note']}",
              flush=True)
        return row

    # ---- SDPA default (cuDNN here)
    def sdpa_fwd():
        with torch.no_grad():
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    def sdpa_fb():
        return torch.autograd.grad(F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal), (qg, kg, vg), do)

    record("sdpa:default", "fwd", lambda: fwd_err(sdpa_fwd(), ref_o), sdpa_fwd)
    record("sdpa:default", "fwd+bwd", lambda: grad_err(sdpa_fb(), ref_g), sdpa_fb)
    if st3 is None:
        return

    # ---- stage 3 as the gallery calls it: pointer kernels at the round-1 winners (BEST_CONFIGS), autograd
    best = st3.BEST_CONFIGS.get((causal, d))

    def st3_fwd():
        with torch.no_grad():
            return st3.attention(q, k, v, causal=causal)

    def st3_fb():
        return torch.autograd.grad(st3.attention(qg, kg, vg, causal=causal), (qg, kg, vg), do)

    cfg_all = None if best is None else [list(c) for c in best]
    record("stage3 ptr (round 1)", "fwd", lambda: fwd_err(st3_fwd(), ref_o), st3_fwd, cfg_all and cfg_all[0])
    record("stage3 ptr (round 1)", "fwd+bwd", lambda: grad_err(st3_fb(), ref_g), st3_fb, cfg_all)

    # ---- TMA forward variants. opts = (desc "4d"/"2d", warp_specialize, persistent programs per SM, device_desc)
    found = []  # (ms, cfg, opts)

    def tma_variant(cfg, opts):
        desc, ws, pers, dev = opts
        name = f"tma{desc}{' dev' if dev else ''}{' ws' if ws else ''}{f' persist{pers}' if pers else ''}"

        def f():
            return st3.forward(q, k, v, causal, config=cfg, tma=desc, warp_specialize=ws, persistent=pers,
                               device_desc=dev)[0]

        r = record(name, "fwd", lambda: fwd_err(f(), ref_o), f, [list(cfg), desc, ws, pers, dev])
        if r["ms"] is not None:
            found.append((r["ms"], cfg, opts))

    def top():
        return min(found, key=lambda t: t[0])[1:] if found else (TMA_SWEEP[0], ("4d", False, 0, False))

    for cfg in TMA_SWEEP:  # host-side 4-D descriptors over the configs
        tma_variant(cfg, ("4d", False, 0, False))
    cfg = top()[0]
    for opts in (("2d", False, 0, False), ("4d", False, 0, True), ("2d", False, 0, True)):
        tma_variant(cfg, opts)
    # Warp-specialized variants after the plain ones: should one crash the process, the plain rows are in the
    # JSON already (written after every combo) and printed in the progress lines. Triton's Hopper warp
    # specialization is documented for in-kernel (device) descriptors; the host 4-D one is the control.
    for opts in (("4d", True, 0, True), ("2d", True, 0, True), ("4d", True, 0, False)):
        tma_variant(cfg, opts)
    cfg, (desc, ws, _, dev) = top()
    for pers in (1, 2):
        tma_variant(cfg, (desc, ws, pers, dev))
    if not found:
        return
    _, cfg, (desc, ws, pers, dev) = min(found, key=lambda t: t[0])

    def tma_fb():
        o2, lse2 = st3.forward(q, k, v, causal, store_lse=True, config=cfg, tma=desc, warp_specialize=ws,
                               persistent=pers, device_desc=dev)
        return st3.backward(q, k, v, o2, lse2, do, causal)

    record("stage3 best tma + bwd", "fwd+bwd", lambda: grad_err(tma_fb(), ref_g), tma_fb,
           [list(cfg), desc, ws, pers, dev])


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name() if DEVICE == 'cuda' else 'cpu'}", flush=True)
    try:
        st3 = load_stage3()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        st3 = None
    for causal, d in COMBOS:
        run_combo(causal, d, st3, rows)
        (OUT / "explore_attention.json").write_text(json.dumps({"B": B, "H": H, "S": S, "rows": rows}, indent=1))
        if DEVICE == "cuda":
            torch.cuda.empty_cache()

    (OUT / "explore_attention.json").write_text(json.dumps({"B": B, "H": H, "S": S, "rows": rows}, indent=1))
    # ---- the table, last
    print(f"\n=== flash attention B{B} H{H} S{S} bf16, medians of do_bench (ms), TFLOP/s; total {elapsed():.0f} s")
    print(f"{'combo':14s} {'variant':22s} {'mode':8s} {'ms':>8s} {'TFLOP/s':>8s} {'err':>8s}  config / note")
    for r in rows:
        ms = f"{r['ms']:.4f}" if r["ms"] is not None else "-"
        tf = f"{r['tflops']:.0f}" if r["tflops"] is not None else "-"
        err = f"{r['err']:.2e}" if r["err"] is not None else "-"
        cfg = "" if r["config"] is None else json.dumps(r["config"]).replace(" ", "")
        print(f"{r['combo']:14s} {r['variant']:22s} {r['mode']:8s} {ms:>8s} {tf:>8s} {err:>8s}  {cfg} {r['note'][:70]}")
    print("\n=== per combo: best SDPA vs best stage 3 variant (speedup = SDPA ms / stage 3 ms)")
    for causal, d in COMBOS:
        combo = f"{'causal' if causal else 'noncausal'} D{d}"
        for mode in ("fwd", "fwd+bwd"):
            ok = [r for r in rows if r["combo"] == combo and r["mode"] == mode and r["ms"] is not None]
            sd = [r for r in ok if r["variant"].startswith("sdpa")]
            st = [r for r in ok if not r["variant"].startswith("sdpa")]
            dflt = next((r for r in sd if r["variant"] == "sdpa:default"), None)
            bs = min(sd, key=lambda r: r["ms"], default=None)
            bt = min(st, key=lambda r: r["ms"], default=None)
            if bs is None or bt is None:
                print(f"{combo:14s} {mode:8s} incomplete")
                continue
            vs_default = f"{dflt['ms'] / bt['ms']:.2f}x vs default" if dflt else ""
            print(f"{combo:14s} {mode:8s} best sdpa {bs['variant']} {bs['ms']:.4f} ms ({bs['tflops']:.0f} TF/s) | "
                  f"stage3 {bt['variant']} {bt['ms']:.4f} ms ({bt['tflops']:.0f} TF/s) "
                  f"cfg {json.dumps(bt['config']).replace(' ', '')} | {bs['ms'] / bt['ms']:.2f}x vs best, {vs_default}")


if __name__ == "__main__":
    sys.exit(main())
