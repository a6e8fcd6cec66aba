"""Attention round 4 (issue 38): the forward variants the H100 profile points at, against SDPA (cuDNN), in one process.

The profile (ncu, H100, B4 H32 S4096 D128 bf16 causal forward; benchmarks/explore/README.md): stage 3's forward is
register-bound, 251 registers/thread, one 8-warp CTA per SM (12.5 % occupancy), issue slots 30 % busy; cuDNN runs a
persistent 3-warpgroup kernel (a TMA producer, two consumers) at 168 registers, 0.92 vs 1.18 ms. Candidates, each a
stage3.FwdPlan (so the winner is adopted by copying the printed line into stage3.FWD_PLANS):
- "tma" + ws at num_warps=4: Triton 3.6's Hopper warp specialization (nvgpu-warp-specialization) runs only on a
  kernel of 4 warps (it leaves 8-warp kernels alone: rounds 2 and 3 used 8, so their "ws" rows were never
  specialized); it splits the loop into a TMA producer warpgroup and up to two consumer warpgroups that share
  BLOCK_M's rows (FA3's layout, 12 warps in all). Each row says whether the TTGIR holds ttg.warp_specialize.
- "split": two independent BLOCK_M // 2-row chains per program sharing each K/V block (ping-pong ILP in one
  program), at 8 and at 4 warps (4 warps: one warpgroup per 64-row dot, ~2 CTAs per SM).
- two CTAs per SM instead of one: maxnreg=128 on 8-warp tiles whose shared memory fits twice (2 x 96 KB at D128,
  BLOCK_N 64, 2 stages). Independent CTAs drift out of phase, so one's softmax overlaps the other's wgmma: the
  overlap FA3's ping-pong schedules by hand.
- "ptr" at lower register pressure: BLOCK_N 64 for D128, 64-row tiles at 4 warps (several CTAs per SM), 16 warps
  over 128 and 256 rows.
Backward: stage 3's kernels at a few (dK/dV, dQ) configs beside the shipped pair; forward+backward of the best pair
through autograd, as the gallery runs it.

Method: B4 H32 S4096 bf16; inputs rotated over ROTATE sets; triton.testing.do_bench medians (L2 flushed before every
run, warmup 10 ms, rep EXPLORE_REP_MS); SDPA default (cuDNN) and the shipped stage 3 timed in the same process;
every variant checked against a float32 SDPA on the same values before it is timed (forward max abs error <=
FWD_TOL; gradients max abs error / max abs <= GRAD_TOL); compiled facts (registers, spills, warp specialization,
total warps) per row. Each combo runs its D's candidates in order until its share of EXPLORE_BUDGET_S is spent
(rows past it: "skipped (time budget)"); a non-causal combo runs only the TOP_FOR_NONCAUSAL fastest forward plans of
the causal combo with its D. Writes $OUT/attention_sweep.json after every
row; prints the table last, then one FWD_PLANS / BWD_PLANS line per (causal, D) whose best beats the shipped plan.

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/explore/attention_sweep.py
Without a GPU (TRITON_INTERPRET=1): B1 H2 S128, each non-TMA candidate checked once, nothing timed for real.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.testing

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("OUT", "/tmp/out"))
BUDGET_S = float(os.environ.get("EXPLORE_BUDGET_S", 180))
REP_MS = int(os.environ.get("EXPLORE_REP_MS", 50))
ROTATE = 2
FWD_TOL = 2e-2
GRAD_TOL = 5e-2
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
B, H, S = (4, 32, 4096) if DEVICE == "cuda" else (1, 2, 128)
COMBOS = [(True, 128), (True, 64), (False, 128), (False, 64)]  # the row first
COMBO_SHARE = [0.34, 0.33, 0.165, 0.165]  # of BUDGET_S, cumulative deadlines; unspent time carries over
TOP_FOR_NONCAUSAL = 4
T0 = time.perf_counter()


def _load_stage3():
    spec = importlib.util.spec_from_file_location("fa_stage3", ROOT / "examples/flash_attention/stage3.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ST3 = _load_stage3()
P = ST3.FwdPlan
# Forward candidates per head dim, most promising first (a combo that runs out of time loses the tail).
FWD_CANDIDATES = {
    128: [
        P("tma", 128, 128, 4, 2, desc="2d", ws=True, device_desc=True),
        P("tma", 128, 64, 4, 2, desc="2d", ws=True, device_desc=True),
        P("tma", 128, 64, 4, 3, desc="2d", ws=True, device_desc=True),
        P("tma", 128, 128, 4, 2, desc="2d", ws=True),
        P("ptr", 128, 64, 8, 2, maxnreg=128),
        P("split", 128, 64, 8, 2, maxnreg=128),
        P("split", 128, 64, 8, 3),
        P("split", 128, 128, 8, 2),
        P("split", 128, 64, 4, 2),
        P("ptr", 64, 64, 4, 2),
        P("ptr", 128, 64, 8, 3),
        P("ptr", 128, 128, 16, 2),
        P("ptr", 256, 64, 16, 2),
        P("tma", 128, 128, 4, 2, desc="2d", ws=False, device_desc=True),
        P("tma", 128, 128, 4, 2, desc="2d", ws=True, device_desc=True, persistent=1),
    ],
    64: [
        P("tma", 128, 64, 4, 2, desc="2d", ws=True, device_desc=True),
        P("tma", 128, 128, 4, 2, desc="2d", ws=True, device_desc=True),
        P("tma", 128, 64, 4, 3, desc="2d", ws=True, device_desc=True),
        P("tma", 128, 128, 4, 3, desc="2d", ws=True, device_desc=True),
        P("ptr", 128, 64, 8, 3, maxnreg=128),
        P("ptr", 128, 128, 8, 2, maxnreg=128),
        P("split", 128, 64, 8, 3),
        P("split", 128, 64, 4, 3),
        P("split", 256, 64, 8, 2),
        P("ptr", 64, 64, 4, 3),
        P("ptr", 64, 32, 4, 3),
        P("ptr", 256, 64, 16, 2),
        P("ptr", 256, 64, 16, 3),
        P("ptr", 128, 64, 8, 4),
    ],
}
# Backward (dK/dV, dQ) candidates beside the shipped pair (BWD_PLANS).
BWD_CANDIDATES = {
    128: [((64, 128, 8, 2), (128, 64, 8, 3)), ((32, 64, 4, 4), (128, 64, 8, 4))],
    64: [((32, 64, 4, 4), (128, 64, 8, 4)), ((64, 128, 8, 3), (128, 128, 8, 2))],
}


def elapsed() -> float:
    return time.perf_counter() - T0


def bench(fn) -> float:
    if DEVICE == "cpu":
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e3
    return float(triton.testing.do_bench(fn, warmup=10, rep=REP_MS, return_mode="median"))


def rotating(fn_of_set):
    """A no-argument callable that runs fn_of_set(i) on the next of the ROTATE input sets each call."""
    state = [0]

    def f():
        state[0] = (state[0] + 1) % ROTATE
        return fn_of_set(state[0])
    return f


def flops(causal: bool, d: int, mode: str) -> float:
    """Forward 4*B*H*S*S*D (halved when causal); backward 2.5x, forward+backward 3.5x."""
    return 4.0 * B * H * S * S * d / (2 if causal else 1) * {"fwd": 1.0, "bwd": 2.5, "fwd+bwd": 3.5}[mode]


def compiled_facts() -> dict:
    """What the compiler made of the last planned forward launch (stage3.LAST_COMPILED)."""
    k = ST3.LAST_COMPILED
    if k is None or not hasattr(k, "asm"):
        return {}
    ttgir, ptx = k.asm.get("ttgir", ""), k.asm.get("ptx", "")
    threads = re.search(r"\.(?:maxntid|reqntid)\s+(\d+)", ptx)  # the CTA's threads, warp-specialized partitions included
    total = re.search(r'"ttg.total-num-warps"\s*=\s*(\d+)', ttgir)
    warps = int(threads.group(1)) // 32 if threads else int(total.group(1)) if total else k.metadata.num_warps
    return {"regs": getattr(k, "n_regs", None), "spills": getattr(k, "n_spills", None),
            "ws": "ttg.warp_specialize" in ttgir, "setmaxnreg": "setmaxnreg" in ptx, "warps": warps}


def plan_text(plan) -> str:
    """The FwdPlan as it would be written into stage3.FWD_PLANS (defaults left out)."""
    parts = [repr(plan.kind), str(plan.block_m), str(plan.block_n), str(plan.warps), str(plan.stages)]
    for field, default in (("desc", "2d"), ("ws", False), ("device_desc", False), ("persistent", 0),
                           ("maxnreg", None)):
        value = getattr(plan, field)
        if value != default and (plan.kind == "tma" or field == "maxnreg"):
            parts.append(f"{field}={value!r}")
    return f"FwdPlan({', '.join(parts)})"


def run_combo(causal: bool, d: int, rows: list[dict], deadline: float) -> None:
    combo = f"{'causal' if causal else 'noncausal'} D{d}"
    g = torch.Generator(device=DEVICE).manual_seed(0)
    sets = [tuple(torch.randn((B, H, S, d), device=DEVICE, dtype=torch.bfloat16, generator=g) for _ in range(4))
            for _ in range(ROTATE)]
    q, k, v, do = sets[0]
    qf, kf, vf = (t.float().requires_grad_() for t in (q, k, v))
    ref_o = F.scaled_dot_product_attention(qf, kf, vf, is_causal=causal)
    ref_g = torch.autograd.grad(ref_o, (qf, kf, vf), do.float())
    ref_o = ref_o.detach()
    del qf, kf, vf
    leaves = [tuple(t.clone().requires_grad_() for t in s[:3]) for s in sets]

    def fwd_err(o) -> float:
        return (o.float() - ref_o).abs().max().item()

    def grad_err(gs) -> float:
        return max(((a.float() - r).abs().max() / r.abs().max().clamp_min(1e-6)).item() for a, r in zip(gs, ref_g))

    def record(variant: str, mode: str, check, fn, plan=None, cfg=None) -> dict:
        row = {"combo": combo, "variant": variant, "mode": mode, "plan": plan_text(plan) if plan else None,
               "config": cfg, "ms": None, "tflops": None, "err": None, "facts": {}, "note": ""}
        rows.append(row)
        if elapsed() > deadline:
            row["note"] = "skipped (time budget)"
            return row
        try:
            err = check()
            row["err"] = err
            if plan is not None:
                row["facts"] = compiled_facts()
            if not err <= (FWD_TOL if mode == "fwd" else GRAD_TOL):  # NaN fails too
                row["note"] = f"WRONG (err {err:.3g})"
            else:
                row["ms"] = bench(fn)
                row["tflops"] = flops(causal, d, mode) / row["ms"] * 1e-9
        except Exception as e:  # noqa: BLE001 - a variant that does not compile or run is a row, not a stop
            row["note"] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
        if DEVICE == "cuda":
            torch.cuda.synchronize()
        print(f"[{elapsed():6.1f}s] {combo:14s} {variant:10s} {mode:7s} {row['plan'] or cfg or ''} -> "
              f"{row['ms'] if row['ms'] is None else round(row['ms'], 4)} {row['facts']} {row['note']}", flush=True)
        (OUT / "attention_sweep.json").write_text(json.dumps({"B": B, "H": H, "S": S, "rows": rows}, indent=1))
        return row

    # ---- SDPA's default (cuDNN on Hopper) and stage 3 as shipped, in this process
    def sdpa_fwd(i):
        with torch.no_grad():
            return F.scaled_dot_product_attention(*sets[i][:3], is_causal=causal)

    def sdpa_fb(i):
        return torch.autograd.grad(F.scaled_dot_product_attention(*leaves[i], is_causal=causal), leaves[i],
                                   sets[i][3])

    def st3_fwd(i, plan=None):
        with torch.no_grad():
            return ST3.forward(*sets[i][:3], causal, plan=plan)[0]

    def st3_fb(i):
        return torch.autograd.grad(ST3.attention(*leaves[i], causal=causal), leaves[i], sets[i][3])

    record("sdpa", "fwd", lambda: fwd_err(sdpa_fwd(0)), rotating(sdpa_fwd))
    record("sdpa", "fwd+bwd", lambda: grad_err(sdpa_fb(0)), rotating(sdpa_fb))
    shipped = ST3.plan_for(q, k, v, causal)
    record("shipped", "fwd", lambda: fwd_err(st3_fwd(0)), rotating(st3_fwd), plan=shipped)
    record("shipped", "fwd+bwd", lambda: grad_err(st3_fb(0)), rotating(st3_fb),
           cfg=[list(c) for c in ST3.BWD_PLANS.get((causal, d), ())])

    # ---- forward candidates: all of them for a causal combo; for a non-causal one the TOP_FOR_NONCAUSAL fastest
    # of the causal combo of the same D (compiling every candidate twice does not fit one device call)
    candidates = FWD_CANDIDATES.get(d, [])
    ranked = sorted((r for r in rows if r["combo"] == f"causal D{d}" and r["mode"] == "fwd" and r["ms"] is not None
                     and r["variant"] not in ("sdpa", "shipped")), key=lambda r: r["ms"])
    if not causal and ranked:
        top = [r["plan"] for r in ranked[:TOP_FOR_NONCAUSAL]]
        candidates = [c for c in candidates if plan_text(c) in top]
    for plan in candidates:
        if plan.kind == "tma" and ST3.tma_refusal(q, k, v, plan) is not None:
            rows.append({"combo": combo, "variant": "tma", "mode": "fwd", "plan": plan_text(plan), "config": None,
                         "ms": None, "tflops": None, "err": None, "facts": {},
                         "note": "skipped: " + ST3.tma_refusal(q, k, v, plan)})
            continue
        record(plan.kind + (" ws" if plan.ws else ""), "fwd", lambda plan=plan: fwd_err(st3_fwd(0, plan)),
               rotating(lambda i, plan=plan: st3_fwd(i, plan)), plan=plan)

    # ---- backward alone at the shipped pair and the candidates (given the shipped forward's o and lse)
    o_lse = [ST3.forward(*s[:3], causal, store_lse=True) for s in sets]
    bwd_rows = []
    for dkdv, dq in [ST3.BWD_PLANS.get((causal, d))] + BWD_CANDIDATES.get(d, []):
        if dkdv is None:
            continue

        def bwd(i, dkdv=dkdv, dq=dq):
            return ST3.backward(*sets[i][:3], *o_lse[i], sets[i][3], causal, dkdv_config=dkdv, dq_config=dq)

        r = record("bwd", "bwd", lambda bwd=bwd: grad_err(bwd(0)), rotating(bwd), cfg=[list(dkdv), list(dq)])
        if r["ms"] is not None:
            bwd_rows.append((r["ms"], dkdv, dq))

    # ---- forward+backward with the best forward plan and backward pair, through autograd as the gallery runs it
    fwd_ok = [r for r in rows if r["combo"] == combo and r["mode"] == "fwd" and r["ms"] is not None
              and r["variant"] != "sdpa"]
    best_fwd = min(fwd_ok, key=lambda r: r["ms"], default=None)
    if best_fwd is None or best_fwd["plan"] is None or not bwd_rows:  # (no plan: the interpreter's autotuned path)
        return
    best_plan = eval(best_fwd["plan"], {"FwdPlan": ST3.FwdPlan})  # noqa: S307 - our own plan_text
    _, dkdv, dq = min(bwd_rows, key=lambda t: t[0])
    saved = ST3.FWD_PLANS.get((causal, d)), ST3.BWD_PLANS.get((causal, d))
    ST3.FWD_PLANS[(causal, d)], ST3.BWD_PLANS[(causal, d)] = best_plan, (dkdv, dq)
    try:
        record("best", "fwd+bwd", lambda: grad_err(st3_fb(0)), rotating(st3_fb), plan=best_plan,
               cfg=[list(dkdv), list(dq)])
    finally:
        ST3.FWD_PLANS[(causal, d)], ST3.BWD_PLANS[(causal, d)] = saved


def summary(rows: list[dict]) -> None:
    print(f"\n=== attention B{B} H{H} S{S} bf16, do_bench medians (ms), TFLOP/s; {elapsed():.0f} s; "
          f"torch {torch.__version__}, triton {triton.__version__}, "
          f"{torch.cuda.get_device_name() if DEVICE == 'cuda' else 'cpu (interpreter: not timings)'}")
    print(f"{'combo':14s} {'variant':10s} {'mode':7s} {'ms':>8s} {'TF/s':>5s} {'err':>8s} {'regs':>4s} {'spill':>5s} "
          f"{'ws':>3s} {'warps':>5s}  plan / config / note")
    for r in rows:
        f = r["facts"] or {}
        ms = f"{r['ms']:.4f}" if r["ms"] is not None else "-"
        tf = f"{r['tflops']:.0f}" if r["tflops"] is not None else "-"
        err = f"{r['err']:.1e}" if r["err"] is not None else "-"
        print(f"{r['combo']:14s} {r['variant']:10s} {r['mode']:7s} {ms:>8s} {tf:>5s} {err:>8s} "
              f"{f.get('regs', '-')!s:>4s} {f.get('spills', '-')!s:>5s} {str(f.get('ws', '-'))[:1]:>3s} "
              f"{f.get('warps', '-')!s:>5s}  {r['plan'] or json.dumps(r['config']).replace(' ', '')} {r['note'][:80]}")
    print("\n=== per combo: SDPA vs shipped vs best (speedup = SDPA ms / stage 3 ms); lines to adopt")
    for causal, d in COMBOS:
        combo = f"{'causal' if causal else 'noncausal'} D{d}"
        mine = [r for r in rows if r["combo"] == combo and r["ms"] is not None]
        for mode in ("fwd", "bwd", "fwd+bwd"):
            sd = next((r for r in mine if r["variant"] == "sdpa" and r["mode"] == mode), None)
            sh = next((r for r in mine if r["variant"] in ("shipped", "bwd") and r["mode"] == mode), None)
            cand = [r for r in mine if r["mode"] == mode and r["variant"] != "sdpa"]
            best = min(cand, key=lambda r: r["ms"], default=None)
            if best is None:
                print(f"{combo:14s} {mode:7s} incomplete")
                continue
            vs = f"{sd['ms'] / best['ms']:.3f}x SDPA ({sd['ms']:.4f} ms)" if sd else "no SDPA row"
            was = f"shipped {sh['ms']:.4f} ms ({sd['ms'] / sh['ms']:.3f}x)" if sh and sd else ""
            print(f"{combo:14s} {mode:7s} best {best['variant']} {best['ms']:.4f} ms = {vs}; {was}")
            if DEVICE == "cpu":  # interpreter times rank nothing
                continue
            if mode == "fwd" and sh is not None and best is not sh and best["ms"] < sh["ms"]:
                print(f"    adopt: FWD_PLANS[({causal}, {d})] = {best['plan']}")
            if mode == "bwd" and sh is not None and best is not sh and best["ms"] < sh["ms"]:
                print(f"    adopt: BWD_PLANS[({causal}, {d})] = ({tuple(best['config'][0])}, {tuple(best['config'][1])})")
    print(ws_line(rows))


def ws_line(rows: list[dict]) -> str:
    """Did Triton specialize the loops it was asked to (the question rounds 2 and 3 never checked)?"""
    ws_rows = [r for r in rows if r["variant"] == "tma ws" and r["facts"]]
    engaged = sum(bool(r["facts"].get("ws")) for r in ws_rows)
    warps = sorted({str(r["facts"].get("warps")) for r in ws_rows})
    regs = sorted({str(r["facts"].get("regs")) for r in ws_rows})
    setmax = sum(bool(r["facts"].get("setmaxnreg")) for r in ws_rows)
    return (f"warp specialization: ttg.warp_specialize in the TTGIR of {engaged} of {len(ws_rows)} compiled 'tma ws' "
            f"rows; total warps {', '.join(warps) or '-'}; registers {', '.join(regs) or '-'}; setmaxnreg in {setmax}")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for i, (causal, d) in enumerate(COMBOS):
        run_combo(causal, d, rows, deadline=BUDGET_S * sum(COMBO_SHARE[: i + 1]))
        if DEVICE == "cuda":
            torch.cuda.empty_cache()
    summary(rows)


if __name__ == "__main__":
    sys.exit(main())
