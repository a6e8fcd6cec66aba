"""Flash attention stage 3's forward and backward plans against SDPA (cuDNN), in one process (issue 47).

    PYTHONPATH=$PWD/.site:$PWD/server:$PWD python3 benchmarks/attention_sweep.py   # TRITON_INTERPRET=1: a CPU check

B4 H32 S4096 bf16, causal and non-causal x D128 / D64: SDPA and the shipped stage 3, then FWD_CANDIDATES /
BWD_CANDIDATES (stage3.FwdPlan / BwdPlan, among them `emul` and `lazy`), then fwd+bwd at the best plans. Every row is
checked twice against a float32 SDPA (a moving error flags a race) before do_bench times it (L2 flushed, inputs
rotated); compiled facts (registers, spills, warp specialization, setmaxnreg) are kept. A preflight child runs each TMA
plan once first (a deadlock is skipped, not a hang); each combo gets its share of EXPLORE_BUDGET_S. Prints the table,
per combo SDPA vs shipped vs best with an "adopt:" line where the best beats the shipped plan by ADOPT_MARGIN, and the
emul / lazy rows against the same plan without them; $OUT/attention_sweep.json after every row.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.testing

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(os.environ.get("OUT", "/tmp/out"))
BUDGET_S = float(os.environ.get("EXPLORE_BUDGET_S", 200))  # after the preflight (which compiles the TMA plans)
REP_MS = int(os.environ.get("EXPLORE_REP_MS", 100))  # fwd+bwd runs 5-9 ms: 11+ samples per median
ROTATE = 2
FWD_TOL = 2e-2
GRAD_TOL = 5e-2
ADOPT_MARGIN = 0.01  # a best row must beat the shipped one by 1 %: round 4's repeat spread was about 0.5 %
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
B, H, S = (4, 32, 4096) if DEVICE == "cuda" else (1, 2, 128)
COMBOS = [(True, 128), (True, 64), (False, 128), (False, 64)]  # the row first
COMBO_SHARE = [0.28, 0.24, 0.26, 0.22]  # of BUDGET_S, cumulative deadlines; unspent time carries over
PREFLIGHT_S = float(os.environ.get("PREFLIGHT_PLAN_S", 60))  # one TMA plan's compile + one run, in the child
T0 = time.perf_counter()


def _load_stage3():
    spec = importlib.util.spec_from_file_location("fa_stage3", ROOT / "examples/flash_attention/stage3.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ST3 = _load_stage3()
P, BP = ST3.FwdPlan, ST3.BwdPlan
# Forward candidates per head dim, most promising first (a combo that runs out of time loses the tail); each runs
# for both causal and non-causal, the shipped plan is not timed twice.
FWD_CANDIDATES = {
    128: [
        P("ptr", 128, 64, 8, 2, maxnreg=128, emul=4), P("ptr", 128, 64, 8, 2, maxnreg=128, lazy=8.0, emul=4),
        P("ptr", 128, 64, 8, 2, maxnreg=128, lazy=8.0), P("split", 128, 64, 4, 2, emul=4),
        P("split", 128, 64, 4, 2, lazy=8.0, emul=4),
        # BLOCK_N 32: 223 registers instead of 255 and a spill (the rescale's D / BLOCK_N = 4 multiplies per score
        # are what lazy saves)
        P("split", 128, 32, 4, 2, lazy=8.0, emul=4), P("split", 128, 32, 4, 2, lazy=8.0),
        P("tma", 128, 128, 4, 2, ws=True, device_desc=True, emul=4),
        P("tma", 128, 128, 4, 2, ws=True, device_desc=True, emul=8), P("tma", 128, 128, 4, 2, ws=True, device_desc=True),
        P("ptr", 128, 64, 8, 2, maxnreg=128), P("split", 128, 64, 4, 2),
    ],
    64: [
        P("ptr", 128, 64, 8, 4, emul=4), P("ptr", 128, 64, 8, 4, emul=2), P("ptr", 128, 64, 8, 4, lazy=8.0, emul=4),
        P("split", 128, 64, 4, 2), P("split", 128, 64, 4, 2, emul=4), P("split", 128, 64, 4, 2, lazy=8.0, emul=4),
        P("tma", 128, 128, 4, 2, ws=True, device_desc=True, emul=4), P("ptr", 128, 64, 8, 4),
    ],
}
# Backward candidates beside the shipped plan (BWD_PLANS), most promising first: round 5's bests with and without
# emul (the fused-dQ kernels, 1.6-1.8x slower in round 5, are out).
BWD_CANDIDATES = {
    128: [BP((64, 128, 4, 2), (128, 64, 4, 2), kind="tma", ws=True, dq_ws=True, emul=4),
          BP((64, 128, 4, 2), (128, 128, 4, 2), kind="tma", ws=True, dq_ws=True, emul=4),
          BP((64, 128, 4, 2), (128, 64, 4, 2), kind="tma", ws=True, dq_ws=True),
          BP((64, 128, 4, 2), (128, 128, 4, 2), kind="tma", ws=True, dq_ws=True)],
    64: [BP((32, 64, 4, 4), (128, 64, 8, 4), emul=4),
         BP((64, 64, 4, 3), (128, 64, 8, 3), emul=4),
         BP((32, 64, 4, 4), (128, 64, 8, 4)),
         BP((64, 64, 4, 3), (128, 64, 8, 3))],
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


def compiled_facts(k) -> dict:
    """What the compiler made of a planned launch (stage3.LAST_COMPILED / LAST_COMPILED_BWD)."""
    if k is None or not hasattr(k, "asm"):
        return {}
    ttgir, ptx = k.asm.get("ttgir", ""), k.asm.get("ptx", "")
    threads = re.search(r"\.(?:maxntid|reqntid)\s+(\d+)", ptx)  # the CTA's threads, specialized partitions included
    total = re.search(r'"ttg.total-num-warps"\s*=\s*(\d+)', ttgir)
    warps = int(threads.group(1)) // 32 if threads else int(total.group(1)) if total else k.metadata.num_warps
    nreg = sorted({f"{a}{b}" for a, b in re.findall(r"setmaxnreg\.(inc|dec)\S*\s+(\d+)", ptx)})
    return {"regs": getattr(k, "n_regs", None), "spills": getattr(k, "n_spills", None),
            "ws": "ttg.warp_specialize" in ttgir, "setmaxnreg": ",".join(nreg), "warps": warps,
            "smem": int(getattr(k.metadata, "shared", 0) or 0)}


def variant_of(plan) -> str:
    """A short row label: the kernel kind and the options that change its code."""
    if isinstance(plan, ST3.BwdPlan):
        tile = f"dqws{plan.dq[1]}" if plan.dq_ws else f"{plan.dkdv[0]}x{plan.dkdv[1]}"  # what tells rows apart
        return " ".join([plan.kind] + ["ws"] * plan.ws + [f"dq{plan.fused_dq}"] * bool(plan.fused_dq)
                        + [tile] + [f"e{plan.emul}"] * bool(plan.emul))
    return " ".join([plan.kind, f"{plan.block_m}x{plan.block_n}"] + ["ws"] * plan.ws
                    + [f"e{plan.emul}"] * bool(plan.emul) + [f"L{plan.lazy:g}"] * bool(plan.lazy))


def plan_text(plan) -> str:
    """The plan as it would be written into stage3.FWD_PLANS / BWD_PLANS (defaults left out)."""
    if isinstance(plan, ST3.BwdPlan):
        parts = [str(tuple(plan.dkdv)), str(tuple(plan.dq))]
        for field, default in (("kind", "ptr"), ("ws", False), ("fused_dq", 0), ("dq_ws", False), ("emul", 0)):
            if getattr(plan, field) != default:
                parts.append(f"{field}={getattr(plan, field)!r}")
        return f"BwdPlan({', '.join(parts)})"
    parts = [repr(plan.kind), str(plan.block_m), str(plan.block_n), str(plan.warps), str(plan.stages)]
    for field, default in (("desc", "2d"), ("ws", False), ("device_desc", False), ("persistent", 0),
                           ("maxnreg", None), ("emul", 0), ("lazy", 0.0)):
        value = getattr(plan, field)
        if value != default and (plan.kind == "tma" or field in ("maxnreg", "emul", "lazy")):
            parts.append(f"{field}={value!r}")
    return f"FwdPlan({', '.join(parts)})"


def _plan(text: str):
    return eval(text, {"FwdPlan": ST3.FwdPlan, "BwdPlan": ST3.BwdPlan})  # noqa: S307 - our own plan_text


def run_combo(causal: bool, d: int, rows: list[dict], deadline: float, verdict: dict[str, str]) -> None:
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

    def record(variant: str, mode: str, check, fn, plan=None, cfg=None, facts_of=None) -> dict:
        row = {"combo": combo, "variant": variant, "mode": mode, "plan": plan_text(plan) if plan else None,
               "config": cfg, "ms": None, "tflops": None, "err": None, "facts": {}, "note": ""}
        rows.append(row)
        if elapsed() > deadline:
            row["note"] = "skipped (time budget)"
            return row
        try:
            err = check()
            row["err"] = err
            if facts_of is not None:
                row["facts"] = compiled_facts(facts_of())
            if not err <= (FWD_TOL if mode == "fwd" else GRAD_TOL):  # NaN fails too
                row["note"] = f"WRONG (err {err:.3g})"
            else:
                err2 = check()  # a second run on the same inputs: a race shows as a moving error
                if abs(err2 - err) > 0.25 * max(err, 1e-3):
                    row["note"] = f"RACE? (err {err:.3g} then {err2:.3g})"
                row["ms"] = bench(fn)
                row["tflops"] = flops(causal, d, mode) / row["ms"] * 1e-9
        except Exception as e:  # noqa: BLE001 - a variant that does not compile or run is a row, not a stop
            row["note"] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
        if DEVICE == "cuda":
            torch.cuda.synchronize()
        print(f"[{elapsed():6.1f}s] {combo:14s} {variant:21s} {mode:7s} {row['plan'] or cfg or ''} -> "
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

    def last_fwd():
        return ST3.LAST_COMPILED

    def last_bwd():
        return ST3.LAST_COMPILED_BWD

    record("sdpa", "fwd", lambda: fwd_err(sdpa_fwd(0)), rotating(sdpa_fwd))
    record("sdpa", "fwd+bwd", lambda: grad_err(sdpa_fb(0)), rotating(sdpa_fb))
    shipped = ST3.plan_for(q, k, v, causal)
    shipped_bwd = ST3.bwd_plan_for(q, k, v, causal)
    record("shipped", "fwd", lambda: fwd_err(st3_fwd(0)), rotating(st3_fwd), plan=shipped, facts_of=last_fwd)
    record("shipped", "fwd+bwd", lambda: grad_err(st3_fb(0)), rotating(st3_fb), plan=shipped,
           cfg=plan_text(shipped_bwd) if shipped_bwd else None)

    # ---- forward candidates (the shipped plan is not timed twice)
    def skip(variant: str, mode: str, plan, why: str) -> None:
        rows.append({"combo": combo, "variant": variant, "mode": mode, "plan": plan_text(plan), "config": None,
                     "ms": None, "tflops": None, "err": None, "facts": {}, "note": "skipped: " + why})
        print(f"[{elapsed():6.1f}s] {combo:14s} {variant:21s} {mode:7s} {plan_text(plan)} -> skipped: {why}")

    for plan in FWD_CANDIDATES.get(d, []):
        if plan == shipped:
            continue
        if plan.kind == "tma" and ST3.tma_refusal(q, k, v, plan) is not None:
            skip(variant_of(plan), "fwd", plan, ST3.tma_refusal(q, k, v, plan))
            continue
        if plan.kind == "tma" and verdict.get(_key(causal, d, plan), "ok") != "ok":
            skip(variant_of(plan), "fwd", plan, "preflight: " + verdict[_key(causal, d, plan)])
            continue
        record(variant_of(plan), "fwd", lambda plan=plan: fwd_err(st3_fwd(0, plan)),
               rotating(lambda i, plan=plan: st3_fwd(i, plan)), plan=plan, facts_of=last_fwd)
    # the shipped forward once more, last: this run's spread between two timings of one kernel
    record("shipped again", "fwd", lambda: fwd_err(st3_fwd(0)), rotating(st3_fwd), plan=shipped)

    # ---- backward alone at the shipped plan and the candidates (given the shipped forward's o and lse)
    o_lse = [ST3.forward(*s[:3], causal, store_lse=True) for s in sets]
    bwd_rows = []
    for plan in [shipped_bwd] + [c for c in BWD_CANDIDATES.get(d, []) if c != shipped_bwd]:
        if plan is None:
            continue
        if plan.kind == "tma" and ST3.bwd_tma_refusal(q, k, v, plan) is not None:
            continue
        if plan.kind == "tma" and verdict.get(_key(causal, d, plan), "ok") != "ok":
            skip("bwd " + variant_of(plan), "bwd", plan, "preflight: " + verdict[_key(causal, d, plan)])
            continue

        def bwd(i, plan=plan):
            return ST3.backward(*sets[i][:3], *o_lse[i], sets[i][3], causal, plan=plan)

        variant = "bwd " + variant_of(plan)
        ST3.LAST_COMPILED_BWD = None
        r = record(variant, "bwd", lambda bwd=bwd: grad_err(bwd(0)), rotating(bwd), plan=plan,
                   facts_of=last_bwd if plan.kind == "tma" else None)
        if r["ms"] is not None:
            bwd_rows.append((r["ms"], plan))

    # ---- forward+backward with the best forward plan and backward plan, through autograd as the gallery runs it
    fwd_ok = [r for r in rows if r["combo"] == combo and r["mode"] == "fwd" and r["ms"] is not None
              and r["variant"] not in ("sdpa", "shipped again")]
    best_fwd = min(fwd_ok, key=lambda r: r["ms"], default=None)
    if best_fwd is None or best_fwd["plan"] is None or not bwd_rows:  # (no plan: the interpreter's autotuned path)
        return
    best_plan = _plan(best_fwd["plan"])
    best_bwd = min(bwd_rows, key=lambda t: t[0])[1]
    saved = ST3.FWD_PLANS.get((causal, d)), ST3.BWD_PLANS.get((causal, d))
    ST3.FWD_PLANS[(causal, d)], ST3.BWD_PLANS[(causal, d)] = best_plan, best_bwd
    try:
        record("best", "fwd+bwd", lambda: grad_err(st3_fb(0)), rotating(st3_fb), plan=best_plan,
               cfg=plan_text(best_bwd))
    finally:
        ST3.FWD_PLANS[(causal, d)], ST3.BWD_PLANS[(causal, d)] = saved


def summary(rows: list[dict]) -> None:
    print(f"\n=== attention B{B} H{H} S{S} bf16, do_bench medians (ms), TFLOP/s; {elapsed():.0f} s; "
          f"torch {torch.__version__}, triton {triton.__version__}, "
          f"{torch.cuda.get_device_name() if DEVICE == 'cuda' else 'cpu (interpreter: not timings)'}")
    print(f"{'combo':14s} {'variant':21s} {'mode':7s} {'ms':>8s} {'TF/s':>5s} {'err':>8s} {'regs':>4s} {'spill':>5s} "
          f"{'ws':>3s} {'warps':>5s}  plan / config / note")
    for r in rows:
        f = r["facts"] or {}
        ms = f"{r['ms']:.4f}" if r["ms"] is not None else "-"
        tf = f"{r['tflops']:.0f}" if r["tflops"] is not None else "-"
        err = f"{r['err']:.1e}" if r["err"] is not None else "-"
        print(f"{r['combo']:14s} {r['variant']:21s} {r['mode']:7s} {ms:>8s} {tf:>5s} {err:>8s} "
              f"{f.get('regs', '-')!s:>4s} {f.get('spills', '-')!s:>5s} {str(f.get('ws', '-'))[:1]:>3s} "
              f"{f.get('warps', '-')!s:>5s}  {r['plan'] or json.dumps(r['config']).replace(' ', '')} {r['note'][:80]}")
    print("\n=== per combo: SDPA vs shipped vs best (speedup = SDPA ms / stage 3 ms); lines to adopt")
    for causal, d in COMBOS:
        combo = f"{'causal' if causal else 'noncausal'} D{d}"
        mine = [r for r in rows if r["combo"] == combo and r["ms"] is not None]
        sdpa = {r["mode"]: r["ms"] for r in mine if r["variant"] == "sdpa"}
        if "fwd" in sdpa and "fwd+bwd" in sdpa:
            sdpa["bwd"] = sdpa["fwd+bwd"] - sdpa["fwd"]  # SDPA's backward alone, by difference
        for mode in ("fwd", "bwd", "fwd+bwd"):
            mode_rows = [r for r in rows if r["combo"] == combo and r["mode"] == mode
                         and r["variant"] not in ("sdpa", "shipped again")]
            sh = mode_rows[0] if mode_rows and mode_rows[0]["ms"] is not None else None  # the shipped plan: first
            best = min((r for r in mode_rows if r["ms"] is not None), key=lambda r: r["ms"], default=None)
            if best is None:
                print(f"{combo:14s} {mode:7s} incomplete")
                continue
            sd = sdpa.get(mode)
            vs = f"{sd / best['ms']:.3f}x SDPA ({sd:.4f} ms{' by difference' if mode == 'bwd' else ''})" if sd \
                else "no SDPA row"
            was = f"shipped {sh['ms']:.4f} ms ({sd / sh['ms']:.3f}x)" if sh and sd else ""
            plans = " + ".join(str(x) for x in (best["plan"], best["config"] if mode == "fwd+bwd" else None) if x)
            again = [r["ms"] for r in rows if r["combo"] == combo and r["mode"] == mode and r["ms"] is not None
                     and r["variant"] == "shipped again"]
            spread = f" (shipped again {again[0]:.4f} ms: {again[0] / sh['ms'] - 1:+.1%})" if again and sh else ""
            print(f"{combo:14s} {mode:7s} best {best['variant']} {best['ms']:.4f} ms = {vs}; {was}{spread}  {plans}")
            if DEVICE == "cpu" or mode == "fwd+bwd" or sh is None or best is sh:  # interpreter times rank nothing
                continue
            table = "FWD_PLANS" if mode == "fwd" else "BWD_PLANS"
            if best["ms"] < sh["ms"] * (1 - ADOPT_MARGIN):
                print(f"    adopt: {table}[({causal}, {d})] = {best['plan']}")
            else:
                print(f"    keep: {table}[({causal}, {d})] (best within {ADOPT_MARGIN:.0%} of shipped)")
    for line in ws_lines(rows):
        print(line)
    print("\n=== round-6 options against the same plan without them (same run; negative = faster)")
    for line in option_lines(rows):
        print(line)


def option_lines(rows: list[dict]) -> list[str]:
    """Per timed row with emul or lazy: its time against the row of the same plan with neither, when timed."""
    out = []
    for r in rows:
        if r["ms"] is None or not r["plan"] or r["variant"] in ("best", "shipped again") or r["mode"] == "fwd+bwd":
            continue
        plan = _plan(r["plan"])
        base = plan._replace(emul=0, lazy=0.0) if isinstance(plan, ST3.FwdPlan) else plan._replace(emul=0)
        if base == plan:
            continue
        same = [b for b in rows if b["combo"] == r["combo"] and b["mode"] == r["mode"] and b["ms"] is not None
                and b["plan"] == plan_text(base) and b["variant"] != "shipped again"]
        vs = f"{r['ms'] / same[0]['ms'] - 1:+.1%} vs {same[0]['ms']:.4f} ms ({same[0]['variant']})" if same \
            else "base plan not timed"
        out.append(f"{r['combo']:14s} {r['mode']:4s} {r['variant']:21s} {r['ms']:.4f} ms {vs}  {r['plan']}")
    return out


def ws_lines(rows: list[dict]) -> list[str]:
    """Did Triton specialize the loops it was asked to: per warp-specialized plan row, the compiled facts."""
    out = []
    for kind in ("fwd", "bwd"):
        ws_rows = [r for r in rows if " ws" in r["variant"] and r["mode"] == kind]
        done = [r for r in ws_rows if r["facts"]]
        engaged = sum(bool(r["facts"].get("ws")) for r in done)
        warps = sorted({str(r["facts"].get("warps")) for r in done})
        nreg = sorted({str(r["facts"].get("setmaxnreg")) for r in done})
        fails = sum(r["note"].startswith(("error", "skipped: preflight")) for r in ws_rows)
        wrong = sum(r["note"].startswith(("WRONG", "RACE")) for r in ws_rows)
        out.append(f"warp specialization ({kind}): ttg.warp_specialize in the TTGIR of {engaged} of {len(done)} "
                   f"compiled ws rows ({fails} failed to compile or run, preflight included; {wrong} wrong or moving); total warps "
                   f"{', '.join(warps) or '-'}; setmaxnreg {'; '.join(nreg) or '-'}")
    return out


def _key(causal: bool, d: int, plan) -> str:
    return f"{causal}|{d}|{plan_text(plan)}"


def _tma_jobs() -> list[tuple[bool, int, object]]:
    return [(causal, d, p) for causal, d in COMBOS for p in FWD_CANDIDATES.get(d, []) + BWD_CANDIDATES.get(d, [])
            if p.kind == "tma"]


def preflight() -> dict[str, str]:
    """Run every TMA plan once, at full size, in a child process: {key: "ok" or why not}. A warp-specialized kernel
    that deadlocks (or faults) would otherwise hang or end the whole sweep; here it costs PREFLIGHT_S and its row
    says so. The child's compiles land in Triton's cache, so the sweep's own launches reuse them."""
    jobs = [_key(c, d, p) for c, d, p in _tma_jobs()]
    verdict: dict[str, str] = {}
    while len(verdict) < len(jobs):
        rest = [j for j in jobs if j not in verdict]
        child = subprocess.Popen([sys.executable, __file__, "--preflight"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        child.stdin.write(json.dumps(rest).encode())
        child.stdin.close()
        fd, pending, ended = child.stdout.fileno(), b"", False
        current, last = None, time.perf_counter()
        while not ended:
            ready, _, _ = select.select([fd], [], [], 1.0)
            if ready:  # raw reads: a buffered readline could hold a line back from select
                chunk = os.read(fd, 65536)
                ended = not chunk
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for raw in lines:
                    kind, _, rest_of = raw.decode(errors="replace").partition(" ")
                    key, _, why = rest_of.partition("\t")
                    if kind == "start":
                        current, last = key, time.perf_counter()
                    elif kind in ("ok", "error"):
                        verdict[key] = "ok" if kind == "ok" else why or "error"
                        current, last = None, time.perf_counter()
            elif time.perf_counter() - last > PREFLIGHT_S * (1 if current else 2):  # (2: imports, CUDA start)
                child.kill()
                if current is not None:
                    verdict[current] = f"no answer in {PREFLIGHT_S:.0f} s (hang?)"
                break
        child.wait()
        if current is not None and current not in verdict:  # the child died inside this plan
            verdict[current] = f"the process died (rc {child.returncode})"
        elif current is None:  # it ended between plans: what it did not reach, it will not reach on a retry
            for j in jobs:
                verdict.setdefault(j, f"not reached (preflight child rc {child.returncode})")
        print(f"[{elapsed():6.1f}s] preflight: {sum(v == 'ok' for v in verdict.values())} of {len(verdict)} "
              f"TMA plans ran", flush=True)
    return verdict


def _preflight_child() -> None:
    """--preflight: each job (a key) once; prints start / ok / error lines."""
    torch.manual_seed(0)
    inputs: dict = {}
    for key in json.loads(sys.stdin.read()):
        causal_s, d_s, text = key.split("|", 2)
        causal, d = causal_s == "True", int(d_s)
        print(f"start {key}", flush=True)
        try:
            if (causal, d) not in inputs:
                q, k, v, do = (torch.randn((B, H, S, d), device=DEVICE, dtype=torch.bfloat16) for _ in range(4))
                inputs[(causal, d)] = (q, k, v, do, *ST3.forward(q, k, v, causal, store_lse=True))
            q, k, v, do, o, lse = inputs[(causal, d)]
            plan = _plan(text)
            if isinstance(plan, ST3.BwdPlan):
                ST3.backward(q, k, v, o, lse, do, causal, plan=plan)
            else:
                ST3.forward(q, k, v, causal, plan=plan)
            torch.cuda.synchronize()
            print(f"ok {key}", flush=True)
        except Exception as e:  # noqa: BLE001 - the verdict is the answer
            msg = f"{type(e).__name__}: {str(e).splitlines()[0][:120] if str(e) else ''}"
            print(f"error {key}\t{msg}", flush=True)


def main() -> None:
    if "--preflight" in sys.argv:
        return _preflight_child()
    OUT.mkdir(parents=True, exist_ok=True)
    verdict = preflight() if DEVICE == "cuda" else {}
    start = elapsed()
    rows: list[dict] = []
    signal.signal(signal.SIGTERM, _stop)  # the part's `timeout`: the summary of the rows done still prints
    try:
        for i, (causal, d) in enumerate(COMBOS):
            run_combo(causal, d, rows, deadline=start + BUDGET_S * sum(COMBO_SHARE[: i + 1]), verdict=verdict)
            if DEVICE == "cuda":
                torch.cuda.empty_cache()
    except _Stopped:
        print(f"[{elapsed():6.1f}s] stopped (SIGTERM): the summary covers the rows done", flush=True)
    summary(rows)


class _Stopped(BaseException):  # not an Exception: record() turns those into rows
    pass


def _stop(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second one ends the process
    raise _Stopped


if __name__ == "__main__":
    sys.exit(main())
