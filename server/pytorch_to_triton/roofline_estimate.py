"""The roofline ESTIMATE: run_benchmark's answer without a GPU, and the report's estimate table (issue 46).

The worker (worker/benchmark/estimate.py) gives each stage's launch list at the problem's full size, counted per
program under the interpreter and weighted over each grid, and the torch ops beside the kernels. Here each launch
becomes a time on one GPU (gpu_peaks.py), and the stage's ESTIMATE is their sum:

    launch  = max(t_mem, t_dot + t_alu) + LAUNCH_GAP_US, at the fastest config an autotuner would keep
      t_mem = DRAM bytes / DRAM bandwidth + the rest of the requested bytes / (L2_FACTOR x DRAM bandwidth), where
              DRAM bytes are each byte once plus the rereads of programs whose working sets overflow L2, and the
              bandwidth is scaled down when too few bytes are in flight (a grid smaller than the GPU, a serial loop)
      t_dot = tl.dot FLOPs / (the precision's rate x the tile's tensor-core efficiency), on the SMs the grid fills
      t_alu = elementwise FLOPs / the fp32 rate + special functions / their rate
    torch op = max(bytes / DRAM bandwidth, FLOPs / (its precision's rate x LIBRARY_EFF)) + LAUNCH_GAP_US
    stage   = max(sum of launches and ops, the host's time to issue them)

It ranks stages and sizes their time; it is not a measurement. The text says the method and its error (the counts'
sampling spread, and the model's calibration against GPU medians) and a stage comparison inside that error is
called a tie, never a gain.
"""

from __future__ import annotations

import math
import shlex
import threading
from pathlib import Path
from typing import Any

from . import gpu_peaks, gpu_targets
from .schemas import BenchmarkReport

LABEL = "ESTIMATE"
CAVEAT = ("ESTIMATE, not a measurement: the stage's launches at the problem's size, counted under Triton's CPU "
          "interpreter, timed by a roofline model of the GPU (datasheet peaks; fp32-input tl.dot at measured rates). "
          "It ranks stages and sizes their time; time them on a GPU with run_benchmark before quoting a speed-up.")
# ---- the model's constants (calibrated: benchmarks/estimate_rank.py against H100 medians, RESULTS.md) -----------
DRAM_EFF = 0.88  # our H200 copied at 4222-4246 of its datasheet 4800 GB/s
L2_FACTOR = 2.5  # L2-to-SM bandwidth over DRAM's: the bytes L2 serves (a tiled matmul's rereads) cost this much less
NEAR_FACTOR = 2.0  # a program's rereads of its own bytes over L2's rate (a direct conv's window, a row's second pass):
# trial 21's stage 1 conv reread its inputs 60x and ran at 6.9 ms on an H100, half what L2's rate alone gives
SM_SHARE = 4.0  # one SM alone reaches this multiple of its fair share of DRAM bandwidth (a grid smaller than the GPU)
LATENCY_S = 0.6e-6  # DRAM latency: bytes in flight per SM = its share of the bandwidth x this (Little's law)
ILP = 4  # loads a program keeps in flight at once (a loop's next trips, pipelined: num_stages 3 by default); the
# gallery's serial prefix scan (64 programs of 2 warps, 512 B loads) ran at 2.24 ms on an H100: 4 in flight, 2.4 ms
DOT_FULL_TILE = 128 * 128  # an M x N tl.dot tile this large or more keeps the tensor cores at TC_EFF of peak
TC_EFF = 0.7  # a datasheet tensor-core peak as reached: our H200's bf16 8192^3 matmul ran at 69-71 % of it
EW_EFF = 0.5  # elementwise fp32 work: half the FMA peak (address math and conversions share the issue slots)
SFU_PER_SM_CLK = 16  # special-function results per SM per clock (exp2, rsqrt, ...: CUDA guide, cc 8.x/9.0)
CLOCK_GHZ = 1.98
LIBRARY_EFF = 0.75  # cuBLAS/cuDNN at large sizes (our H200 bf16 8192^3: 69-71 % of peak)
SPILL_TRIPS = 2  # each spilled register is stored and loaded back about once per program (local memory, via L2):
# trial 47's stage 3 kernel spilled 2006 registers and ran 2.2x the time its counted bytes and FLOPs give
LAUNCH_GAP_US = 2.0  # per kernel on the GPU: launch and tail
HOST_TRITON_US = 12.0  # host time to issue one Triton launch (Python binding, key, launcher)
HOST_TORCH_US = 5.0  # one torch op
MODEL_ERROR = 2.0  # the model's factor of error against GPU medians (the acceptance bar; RESULTS.md for the figures)
TIE = 0.25  # two stages whose ESTIMATEs differ by less than this are a tie: the model does not separate them


def _rate(gpu: gpu_peaks.GPU, prec: str) -> float:
    """FLOP/s a tl.dot of this precision reaches: a measured fp32-input rate as it is, a datasheet peak x TC_EFF."""
    rate, dots = gpu.dot_rate(prec)
    return rate * 1e12 / dots * (1.0 if prec in gpu.fp32_dot else TC_EFF)


def _occupancy_slots(row: dict[str, Any], warps: int) -> int:
    """Programs one SM holds at once: from the compile's occupancy where known, else by threads alone."""
    comp = row.get("compiled") or {}
    occ = comp.get("occupancy")
    if occ:
        return max(1, int(round(float(occ) * 2048 / (32 * warps))))
    return max(1, min(32, 2048 // (32 * warps)))


def launch_time(row: dict[str, Any], gpu: gpu_peaks.GPU) -> dict[str, Any]:
    """One config of one launch: its figures in µs (t_mem, t_dot, t_alu, the total and what bounds it)."""
    c = row["counts"]
    comp = row.get("compiled") or {}
    warps = int(comp.get("num_warps") or row.get("options", {}).get("num_warps") or 4)
    per_sm = _occupancy_slots(row, warps)
    slots = gpu.sms * per_sm
    programs = max(1, int(row.get("programs") or 1))
    if row.get("persistent_tiles"):  # a persistent kernel fills the GPU it runs on, whatever grid the host chose
        programs = max(programs, min(int(row["persistent_tiles"]), slots))
    active_sms = min(gpu.sms, programs)
    requested = float(c["load_bytes"]) + float(c["store_bytes"])
    spilled = float(comp.get("n_spills") or 0) * 4 * 32 * warps * programs * SPILL_TRIPS  # local memory, L2-served
    bw_peak = gpu.bandwidth_gbs * 1e9 * DRAM_EFF
    # Parallelism: the bytes the resident programs keep in flight per SM against what keeps its share of DRAM busy
    # (a 16 KB tile load per program saturates it; a serial scan's 512 B steps on one program per SM do not).
    per_access = requested / max(1.0, float(c.get("loads") or 0) + float(c.get("stores") or 0))
    resident = max(1.0, min(programs / active_sms, per_sm))
    par = min(1.0, resident * per_access * ILP / (bw_peak * LATENCY_S / gpu.sms))
    bw = min(bw_peak, active_sms * SM_SHARE * bw_peak / gpu.sms) * par
    unique = float(row.get("unique_bytes") if row.get("unique_bytes") is not None else requested)
    dram = min(unique, requested)
    own = min(requested, max(dram, float(c.get("program_unique_bytes") or requested)))  # each program's bytes once
    concurrent = min(programs, slots)
    near = requested - own  # a program rereading what it read itself: its rows, its neighbourhood (a direct conv)
    cross = own - dram  # one program reading what another read (a tiled matmul's operand tiles)
    # A row-wise kernel whose programs' rows overflow L2 rereads them from DRAM (cross-entropy's two passes over
    # 256 KB rows: 1.38 ms on an H100, twice the one-pass stage); a tl.dot kernel's rereads are operand tiles that
    # its neighbours share, served by L2 (a persistent matmul's program "rereads" across its many tiles)
    if not c["dot_flops"] and own / programs * concurrent > gpu.l2_mb * 1e6:
        dram, near = dram + near, 0.0
    # DRAM serves each byte once (and the rereads L2 cannot hold); L2 the other programs' bytes, at L2_FACTOR the
    # bandwidth; a program's own rereads hit the lines it just brought in (L1 or L2), NEAR_FACTOR faster again
    t_mem = (dram / bw + (cross + spilled) / (bw * L2_FACTOR) + near / (bw * L2_FACTOR * NEAR_FACTOR)) * 1e6 \
        if bw > 0 else 0.0
    sm_frac = active_sms / gpu.sms
    waves = programs / slots
    tail = math.ceil(waves) / waves if waves > 1 else 1.0  # the last wave's idle SMs
    tile = c.get("dot_tile") or [0, 0, 0]
    tile_eff = min(1.0, (tile[0] * tile[1]) / DOT_FULL_TILE) ** 0.5 if tile[0] else 1.0  # small tiles idle the
    # tensor cores between loads; an ieee (fp32 FMA) dot runs on the CUDA cores, whatever its tile
    t_dot = sum(float(f) / (_rate(gpu, p) * (1.0 if p in ("ieee", "fp32") else tile_eff) * sm_frac)
                for p, f in c["dot_flops"].items()) * 1e6 * tail
    fp32 = gpu.tflops.get("fp32", 60.0) * 1e12
    sfu = SFU_PER_SM_CLK * gpu.sms * CLOCK_GHZ * 1e9
    t_alu = (float(c.get("ew_flops") or 0) / (fp32 * EW_EFF * sm_frac) + float(c.get("sfu_ops") or 0) /
             (sfu * sm_frac)) * 1e6 * tail
    est = max(t_mem, t_dot + t_alu) + LAUNCH_GAP_US  # softmax math between dots does not overlap them (no warp
    # specialisation in these kernels); memory overlaps both
    bound = "memory" if t_mem >= t_dot + t_alu else ("tl.dot" if t_dot >= t_alu else "elementwise")
    if par < 1.0 and bound == "memory":
        bound = "latency"
    return {"t_mem_us": t_mem, "t_dot_us": t_dot, "t_alu_us": t_alu, "est_us": est, "bound": bound,
            "moved_bytes": requested, "parallelism": par}


def best_config(row: dict[str, Any], gpu: gpu_peaks.GPU) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the config an autotuner would keep: the fastest of the launched one and the others counted, its times)."""
    spills = (row.get("compiled") or {}).get("n_spills")
    options = [row] + [{**row, **alt, "compiled": _with_spills(alt.get("compiled") or {}, spills)}
                       for alt in row.get("alternatives") or []]
    counted = [o for o in options if counted_launch(o)] or [row]
    timed = [(o, launch_time(o, gpu)) for o in counted]
    return min(timed, key=lambda ot: ot[1]["est_us"])


def _with_spills(compiled: dict[str, Any], launched: Any) -> dict[str, Any]:
    """A config left at Triton's frontend (no registers known) is taken to spill as the launched one does: the
    autotuner's configs of one kernel share its register pressure more often than not (a spill-free guess made the
    fastest config of trial 47's stage 3 look 2.9x too fast)."""
    if compiled.get("n_regs") is not None or not launched:
        return compiled
    return {**compiled, "n_spills": launched}


def counted_launch(row: dict[str, Any]) -> bool:
    """Whether at least one program of this launch (config) ran to its end, so its counts mean something."""
    return int(row.get("sampled") or 0) > 0 or int(row.get("programs") or 0) == 0


def op_time(op: dict[str, Any], gpu: gpu_peaks.GPU) -> dict[str, Any]:
    """One torch op (cuBLAS, cuDNN, an elementwise kernel) at its bound."""
    bw = gpu.bandwidth_gbs * 1e9 * DRAM_EFF
    t_mem = float(op["bytes"]) / bw * 1e6
    t_fl = 0.0
    if op.get("flops"):
        prec = op.get("precision") or "fp32"
        rate = gpu.tflops.get("fp32", 60.0) * 1e12 if prec == "fp32" else gpu.peak(prec) * 1e12
        t_fl = float(op["flops"]) / (rate * LIBRARY_EFF) * 1e6
    return {"t_mem_us": t_mem, "t_flops_us": t_fl, "est_us": max(t_mem, t_fl) + LAUNCH_GAP_US,
            "bound": "flops" if t_fl > t_mem else "memory"}


def stage_time(rec: dict[str, Any], gpu: gpu_peaks.GPU) -> dict[str, Any]:
    """The stage's ESTIMATE on `gpu`: its launches and ops summed, against the host's time to issue them."""
    if not rec.get("launches") and not rec.get("library"):  # the fallback (scaled shrunk count): the roofline alone
        t = times(rec.get("scaled") or {}, gpu)
        return {**t, "gpu_us": t["est_us"], "host_us": 0.0, "launches": [], "library_us": 0.0, "triton_us": t["est_us"]}
    per = []
    triton = host = 0.0
    mem = dot = 0.0
    for la in rec.get("launches") or []:
        best, t = best_config(la, gpu)
        n = la.get("repeats", 1)
        triton += n * t["est_us"]
        mem += n * t["t_mem_us"]
        dot += n * t["t_dot_us"]
        host += n * HOST_TRITON_US
        per.append({"kernel": la["kernel"], "config": (best.get("compiled") or {}).get("config") or best.get("config")
                    or _meta_text(best), "repeats": n, "grid": best.get("grid"), **t,
                    "autotuned_from": 1 + len(la.get("alternatives") or [])})
    lib = 0.0
    for op in rec.get("library") or []:
        n = op.get("repeats", 1)
        lib += n * op_time(op, gpu)["est_us"]
        host += n * HOST_TORCH_US
    gpu_us = triton + lib
    est = max(gpu_us, host)
    bound = "host" if host > gpu_us else ("library" if lib > triton else
                                          max(per, key=lambda p: p["repeats"] * p["est_us"])["bound"] if per else "-")
    return {"est_us": est, "gpu_us": gpu_us, "host_us": host, "triton_us": triton, "library_us": lib,
            "t_mem_us": mem, "t_dot_us": dot, "bound": bound, "launches": per}


def _meta_text(row: dict[str, Any]) -> str:
    meta = row.get("meta") or {}
    return ", ".join(f"{k}={v}" for k, v in list(meta.items())[:6])


def times(scaled: dict[str, Any], gpu: gpu_peaks.GPU) -> dict[str, Any]:
    """The plain roofline of totals in µs (the fallback's scaled counts): memory time (requested and unique bytes),
    dot time, the larger, and what bounds it."""
    moved = float(scaled.get("load_bytes") or 0) + float(scaled.get("store_bytes") or 0)
    bw = gpu.bandwidth_gbs * 1e9
    t_mem = moved / bw * 1e6
    uniq = scaled.get("unique_bytes")
    t_min = None if uniq is None else float(uniq) / bw * 1e6
    t_dot = 0.0
    for prec, flops in (scaled.get("dot_flops") or {}).items():
        rate, dots = gpu.dot_rate(prec)  # tf32x3: three TF32 dots per tl.dot (F32DotTC), or a measured rate
        t_dot += dots * float(flops) / (rate * 1e12) * 1e6
    est = max(t_mem, t_dot)
    return {"moved_bytes": moved, "t_mem_us": t_mem, "t_mem_unique_us": t_min, "t_dot_us": t_dot, "est_us": est,
            "bound": "tl.dot" if t_dot > t_mem else "memory"}


def _b(n: float | None) -> str:
    if n is None:
        return "–"
    for unit, div in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= div:
            return f"{n / div:.2f} {unit}"
    return f"{n:.0f} B"


def work_check(rec: dict[str, Any]) -> str | None:
    """A warning when the stage counts less work than the reference at full size (its FLOPs by torch's formulas):
    a kernel's work the count misses, or a stage that skips what the reference computes."""
    ref = float((rec.get("reference_full") or {}).get("flops") or 0)
    if ref <= 0:
        return None
    s = rec.get("scaled") or {}
    mine = sum(float(v) for v in (s.get("dot_flops") or {}).values()) + float(s.get("library_flops") or 0) + \
        float(s.get("ew_flops") or 0)
    if mine >= WORK_FLOOR * ref:
        return None
    return (f"counts {mine / 1e9:.3g} GFLOP, {mine / ref:.0%} of the reference's {ref / 1e9:.3g} GFLOP at this "
            "size: a kernel's work the count misses, or work the stage skips (a causal half is 50 %)")


WORK_FLOOR = 0.4  # below 40 % of the reference's FLOPs: more than a causal mask's half (with its diagonal tiles)


def error_of(rec: dict[str, Any]) -> dict[str, Any]:
    """The estimate's error: the counts' (exact where every program ran, else the sampled programs' spread weighted
    by the launch's share of the bytes) and the model's (MODEL_ERROR)."""
    launches = rec.get("launches") or []
    total = sum(la.get("repeats", 1) * (la["counts"]["load_bytes"] + la["counts"]["store_bytes"]) for la in launches)
    err = 0.0
    for la in launches:
        share = la.get("repeats", 1) * (la["counts"]["load_bytes"] + la["counts"]["store_bytes"]) / total if total \
            else 1.0 / len(launches)
        got = la.get("sample_error")
        err += share * (min(1.0, float(got)) if got is not None else
                        (0.0 if la.get("sampled", 0) >= la.get("planned", la.get("sampled", 0)) else 0.5))
    if not launches and rec.get("ok"):
        return {"counts": None, "model": MODEL_ERROR, "text": "counts scaled from a shrunk run (no bound); model "
                f"x{MODEL_ERROR:g}"}
    return {"counts": err, "model": MODEL_ERROR,
            "text": ("counts exact" if err == 0 else f"counts ±{100 * err:.0f}%") + f"; model x{MODEL_ERROR:g}"}


def table(rows: list[tuple[str, dict[str, Any]]], gpu: gpu_peaks.GPU) -> list[str]:
    """Markdown lines: one row per stage, every time labelled ESTIMATE, with its method and error."""
    out = [f"| stage | estimated for | method | bytes moved | tl.dot + library GFLOP | {LABEL} µs on {gpu.name} "
           "| bound | error | work vs reference |", "|---|---|---|---|---|---|---|---|---|"]
    for stage, rec in rows:
        if not rec.get("ok"):
            out.append(f"| {stage} | {_for(rec)} | – | not counted: {str(rec.get('error', '?'))[:120]} | | | | | |")
            continue
        t = stage_time(rec, gpu)
        s = rec.get("scaled") or {}
        moved = float(s.get("load_bytes") or 0) + float(s.get("store_bytes") or 0) + float(s.get("library_bytes") or 0)
        by_prec = {k: float(v) for k, v in (s.get("dot_flops") or {}).items() if float(v)}
        flops = sum(by_prec.values()) + float(s.get("library_flops") or 0)
        precs = f" ({', '.join(sorted(by_prec))})" if by_prec else ""
        method = "dry run, full size" if rec.get("launches") is not None and not rec.get("fallback") else \
            "shrunk run, scaled"
        warn = work_check(rec)
        work = f"WARNING: {warn}" if warn else ("ok" if (rec.get("reference_full") or {}).get("flops") else "–")
        out.append(f"| {stage} | {_for(rec)} | {method} | {_b(moved)} | {flops / 1e9:.3g}{precs} | {LABEL} "
                   f"{t['est_us']:.3g} | {t['bound']} | {error_of(rec)['text']} | {work} |")
    return out


def _for(rec: dict[str, Any]) -> str:
    at = rec.get("estimated_for") or rec.get("full_sizes")
    text = ", ".join(f"{k}={v}" for k, v in at.items()) if isinstance(at, dict) else str(list(at) if at else "–")
    return text[:80]


def compare_lines(rows: list[tuple[str, dict[str, Any]]], gpu: gpu_peaks.GPU) -> list[str]:
    """Each stage against the one before it: faster or slower only outside TIE, else a tie the estimate cannot
    break (the old 'fewer bytes' gate followed count noise; this one says when it has no answer)."""
    timed = [(s, stage_time(r, gpu)["est_us"]) for s, r in rows if r.get("ok")]
    out = []
    for (a, ta), (b, tb) in zip(timed, timed[1:]):
        r = tb / ta if ta else float("inf")
        if abs(r - 1.0) <= TIE:
            out.append(f"{b} vs {a}: {r:.2f}x, within the estimate's ±{int(100 * TIE)} %: a tie; no gain can be "
                       "claimed without a GPU")
        else:
            out.append(f"{b} vs {a}: {r:.2f}x the time, {'faster' if r < 1 else 'slower'} by more than the "
                       f"estimate's ±{int(100 * TIE)} % (still an ESTIMATE: confirm on a GPU)")
    return out


def launch_table(rows: list[tuple[str, dict[str, Any]]], gpu: gpu_peaks.GPU) -> list[str]:
    """Per stage and launch: grid, repeats, the config kept, programs run of the grid, its time and bound."""
    out = ["| stage | kernel / op | config kept | grid × repeats | programs run | µs | bound |",
           "|---|---|---|---|---|---|---|"]
    for stage, rec in rows:
        if not rec.get("ok") or not rec.get("launches"):
            continue
        t = stage_time(rec, gpu)
        groups: dict[tuple[Any, ...], list[Any]] = {}  # a chunked loop's launches: one line each kernel and config
        for la, p in zip(rec["launches"], t["launches"]):
            g = groups.setdefault((la["kernel"], str(p["config"]), str(p["grid"])), [la, p, 0, 0.0])
            g[2] += la.get("repeats", 1)
            g[3] += p["est_us"] * la.get("repeats", 1)
        for la, p, n, us in groups.values():
            out.append(f"| {stage} | {la['kernel']} | {str(p['config'])[:60]}"
                       + (f" (fastest of {p['autotuned_from']})" if p["autotuned_from"] > 1 else "")
                       + f" | {p['grid']} × {n} | {la.get('sampled')} of {la.get('programs')} | {us:.3g} | "
                       f"{p['bound']} |")
        ops = sorted(rec.get("library") or [], key=lambda o: -op_time(o, gpu)["est_us"] * o.get("repeats", 1))
        for op in ops[:6]:
            ot = op_time(op, gpu)
            out.append(f"| {stage} | torch {op['op']} ({op['dtype']}) | – | × {op.get('repeats', 1)} | – | "
                       f"{ot['est_us'] * op.get('repeats', 1):.3g} | {ot['bound']} |")
        if len(ops) > 6:
            rest = sum(op_time(o, gpu)["est_us"] * o.get("repeats", 1) for o in ops[6:])
            out.append(f"| {stage} | {len(ops) - 6} more torch ops | – | – | – | {rest:.3g} | – |")
    return out if len(out) > 2 else []


def footer(gpu: gpu_peaks.GPU) -> list[str]:
    """The lines under every estimate table: what it is, the GPU's figures and their source."""
    peaks = ", ".join(f"{k} {v:g}" for k, v in gpu.tflops.items())
    lines = [CAVEAT, f"{gpu.name}: {gpu.bandwidth_gbs:g} GB/s, {gpu.sms} SMs, TFLOP/s {peaks} ({gpu.source})."]
    if gpu.fp32_dot:
        rates = ", ".join(f"{k} {v:g}" for k, v in gpu.fp32_dot.items())
        lines.append(f"fp32-input tl.dot costed at measured TFLOP/s {rates}: {gpu.fp32_dot_source}.")
    if gpu.measured:
        lines.append(f"Measured: {gpu.measured}.")
    lines.append(f"Method: {METHOD_TEXT} Error: the counts are exact where every program of a launch ran, else "
                 "bounded by the spread between its sampled programs; the time model is within x"
                 f"{MODEL_ERROR:g} of GPU medians (RESULTS.md); two stages within ±{int(100 * TIE)} % are a tie.")
    return lines


METHOD_TEXT = ("a dry run at the problem's size records every launch (grid, constexprs) and torch op; a few programs "
               "of each launch run under the interpreter in stand-in memory, their bytes, tl.dot and elementwise work "
               "weighted over the grid; each launch is timed at the fastest config its autotuner offers, each torch "
               "op at its bound.")


def no_gpu_benchmark(service: Any, ref: Path, cand_paths: list[Path], base: dict[str, Any], gpu_name: str | None,
                     timeout_s: float, on_event: Any = None, cancel: threading.Event | None = None) -> BenchmarkReport:
    """run_benchmark without a GPU: every candidate's launches at full size, one ESTIMATE table, journal rows."""
    from .errors import UsageError
    from .worker_client import WorkerError

    gpu = gpu_peaks.lookup(gpu_name)
    if not cand_paths:
        raise UsageError("without a GPU run_benchmark estimates candidates only: pass candidates=[...] (the stages)")
    rows: list[tuple[str, dict[str, Any]]] = []
    for cand in cand_paths:
        display = service.ws.relative(cand)

        def fwd(msg: dict[str, Any]) -> None:
            if on_event is not None and msg.get("type") == "progress":
                on_event(msg.get("message", ""), msg.get("progress"), msg.get("total"))

        args = {**base, "candidate": str(cand), "candidate_display": display, "gpu": gpu.name}
        try:
            res = service.pool.call("estimate", args, timeout_s=timeout_s, on_event=fwd, cancel=cancel)
        except WorkerError as e:
            if e.kind == "cancelled":
                raise
            res = {"candidate": display, "ok": False, "error": f"{e.kind}: {e}"}
        if res.get("error_usage"):
            raise UsageError(res["error_usage"])
        rows.append((Path(display).name, res))
        if res.get("ok"):
            service._journal(ref, "roofline_estimate", display, {
                "ok": True, "verdict": LABEL, "interpreter": True, "estimated_for": res.get("estimated_for"),
                "sizes_label": res.get("sizes_label"), "scaled": res.get("scaled"), "fallback": res.get("fallback"),
                "launches": _lean(res.get("launches")), "library": res.get("library"),
                "reference_full": {k: v for k, v in (res.get("reference_full") or {}).items() if k != "ops"}})
    return _report(service, ref, cand_paths, base, gpu, rows)


def _lean(launches: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """Launch rows as the journal keeps them (what stage_time reads; no notes)."""
    if launches is None:
        return None
    keep = ("kernel", "repeats", "grid", "programs", "sampled", "planned", "spread", "sample_error", "counts",
            "unique_bytes", "options", "meta", "compiled", "config", "persistent_tiles")
    return [{**{k: la.get(k) for k in keep if k in la},
             "alternatives": [{k: a.get(k) for k in keep if k in a} for a in la.get("alternatives") or []]}
            for la in launches]


def sizes_line(rows: list[tuple[str, dict[str, Any]]]) -> str:
    """Which sizes the estimate is for and where they come from (issue 46: a count at batch 3 was shown as 128)."""
    first = next((r for _, r in rows if r.get("estimated_for")), None)
    if first is None:
        return ""
    interp = first.get("sizes_interpreter")
    return (f"Estimated for {_for(first)} ({first.get('sizes_label')}): the sizes run_benchmark times on a GPU"
            + (f"; the sidecar's [sizes.interpreter] {', '.join(f'{k}={v}' for k, v in interp.items())} is where "
               "validation runs under the interpreter (here only a fallback's count point)" if interp else "") + ".")


def _report(service: Any, ref: Path, cand_paths: list[Path], base: dict[str, Any], gpu: gpu_peaks.GPU,
            rows: list[tuple[str, dict[str, Any]]]) -> BenchmarkReport:
    first = next((r for _, r in rows if r.get("ok")), {})
    notes = [CAVEAT]
    if sizes_line(rows):
        notes.append(sizes_line(rows))
    for stage, r in rows:
        notes += [f"{stage}: {n}" for n in r.get("notes") or []]
        notes += [f"{stage}: {n}" for la in r.get("launches") or [] for n in la.get("notes") or []]
        notes += [f"{stage}: FAIL at full size: {f['message']}" for f in r.get("full_size_findings") or []]
        notes += [f"{stage}: {f['severity'].upper()} {f['message']}" for f in (r.get("resources") or {}).get(
            "findings") or []]
        warn = work_check(r) if r.get("ok") else None
        if warn:
            notes.append(f"{stage}: WARNING: {warn}")
    findings = [n for n in notes if ": FAIL " in n or ": WARN" in n or ": WARNING" in n]
    per = launch_table(rows, gpu)
    res = gpu_targets.config_table([(stage, r.get("resources")) for stage, r in rows])
    text = "\n".join([sizes_line(rows), ""] + table(rows, gpu) + [""] + compare_lines(rows, gpu)
                     + ([""] + findings if findings else []) + ([""] + per if per else []) + ([""] + res if res else [])
                     + [""] + footer(gpu))
    notes += compare_lines(rows, gpu)
    if (first.get("reference_full") or {}).get("bytes_source"):
        notes.append("the sidecar's [bench] bytes/flops are the reference's declared work (reference_full.declared_*)")
    cmd = ["pytorch-to-triton", "bench", service.ws.relative(ref), *[service.ws.relative(p) for p in cand_paths],
           "--gpu", gpu.name]
    if base.get("sizes"):
        cmd += ["--sizes", ",".join(f"{k}={v}" for k, v in base["sizes"].items())]
    return BenchmarkReport(
        ok=all(r.get("ok") for _, r in rows) and not any(r.get("full_size_findings") for _, r in rows),
        device="cpu (Triton interpreter): no GPU",
        verdict=f"{LABEL} only (no GPU): each stage's launches at full size on {gpu.name}; not timed",
        reference=service.ws.relative(ref), notes=notes, summary=text, reproduce=shlex.join(cmd),
        peaks={"gpu": gpu.name, "bandwidth_gbs": gpu.bandwidth_gbs, "tflops": gpu.tflops, "source": gpu.source},
        estimate=[{"stage": s, **r, **({"times": stage_time(r, gpu), "error": error_of(r)} if r.get("ok") else {})}
                  for s, r in rows],
        runtime=next((dict(r["runtime"]) for _, r in rows if isinstance(r.get("runtime"), dict)), {}))


def report_lines(rows: list[tuple[str, dict[str, Any]]], gpu_name: str | None) -> list[str]:
    """The journal report's estimate section (journal rows hold the counts; the GPU is chosen when read)."""
    if not rows:
        return []
    gpu = gpu_peaks.lookup(gpu_name)
    return ["", f"Roofline {LABEL} per stage (no GPU; `report --gpu NAME` for another GPU):", "",
            *table(rows, gpu), "", *compare_lines(rows, gpu), "", *footer(gpu)]
