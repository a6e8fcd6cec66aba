"""The roofline ESTIMATE: run_benchmark's answer without a GPU, and the report's estimate table.

The worker (worker/benchmark/estimate.py) counts each candidate's bytes and tl.dot FLOPs under the interpreter and scales
them to full size; here they are divided by a GPU's peaks (gpu_peaks.py):

    ESTIMATE = max(requested bytes / peak bandwidth, sum over precisions of dot FLOPs / peak for that precision)

It ranks stages by memory traffic and tensor-core work. It is not a time: datasheet peaks are not reached (our H200
copies at 88 % of its datasheet bandwidth), elementwise math, launch overhead, latency and occupancy are not in it,
and caches can serve rereads the count includes (the unique-bytes column is the floor with every reread cached).
"""

from __future__ import annotations

import shlex
import threading
from pathlib import Path
from typing import Any

from . import gpu_peaks
from .schemas import BenchmarkReport

LABEL = "ESTIMATE"
CAVEAT = ("ESTIMATE, not a measurement: counted under Triton's CPU interpreter and scaled to full size, divided by "
          "the GPU's peaks (datasheet; fp32-input tl.dot at measured rates where the table has them). It ranks stages by memory traffic and tl.dot work; it is not their time (peaks are not "
          "reached, elementwise math, launch overhead and caching are not in it). Time on a GPU with run_benchmark.")


def times(scaled: dict[str, Any], gpu: gpu_peaks.GPU) -> dict[str, Any]:
    """Seconds-free figures in µs: memory-bound time (requested and unique bytes), dot time, the max, the bound."""
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


def table(rows: list[tuple[str, dict[str, Any]]], gpu: gpu_peaks.GPU) -> list[str]:
    """Markdown lines: one row per stage, side by side, every time labelled ESTIMATE."""
    out = [f"| stage | measured at | bytes moved (scaled) | unique bytes | tl.dot GFLOP | {LABEL} µs on {gpu.name} "
           "| bound | × reference's bytes |", "|---|---|---|---|---|---|---|---|"]
    for stage, rec in rows:
        if not rec.get("ok"):
            out.append(f"| {stage} | {rec.get('measured_at', '–')} | not counted: {rec.get('error', '?')[:120]} "
                       "| | | | | |")
            continue
        scaled = rec.get("scaled") or {}
        t = times(scaled, gpu)
        by_prec = {k: float(v) for k, v in (scaled.get("dot_flops") or {}).items() if float(v)}
        flops = sum(by_prec.values())
        precs = f" ({', '.join(sorted(by_prec))})" if by_prec else ""
        ref_bytes = float((rec.get("reference_full") or {}).get("bytes") or 0)
        ratio = f"{t['moved_bytes'] / ref_bytes:.2f}×" if ref_bytes else "–"
        out.append(f"| {stage} | {rec.get('measured_at', '–')} | {_b(t['moved_bytes'])} | {_b(scaled.get('unique_bytes'))} "
                   f"| {flops / 1e9:.3g}{precs} | {LABEL} {t['est_us']:.3g} | {t['bound']} | {ratio} |")
    return out


def fit_line(stage: str, rec: dict[str, Any]) -> str:
    """What the fit to the problem's sizes rests on, and its error on the held-back run (issue 40)."""
    fit = rec.get("fit")
    if not fit:
        return f"{stage}: {rec.get('fit_note')}"
    held = fit.get("held_back")
    err = (f"error on a held-back run at {held['sizes']}: {100 * held['max_relative_error']:.1f}% (largest over the "
           "counts)" if held else "no held-back run (no size could move)")
    grows = "; ".join(f"{k}: loads ^{e.get('load_bytes', 0):.2f}" for k, e in fit["exponents"].items())
    fixed = [k for k, v in (fit.get("estimated_for") or {}).items()
             if k not in fit["sizes"] and v != (fit.get("count_point") or {}).get(k)]
    held = f"; not fitted, counted as at the count point: {', '.join(fixed)}" if fixed else ""
    return f"{stage}: fitted over {', '.join(fit['sizes'])} from {fit['count_point']} ({grows}); {err}{held}"


def footer(gpu: gpu_peaks.GPU) -> list[str]:
    """The lines under every estimate table: what it is, the GPU's figures and their source."""
    peaks = ", ".join(f"{k} {v:g}" for k, v in gpu.tflops.items())
    lines = [CAVEAT, f"{gpu.name}: {gpu.bandwidth_gbs:g} GB/s, TFLOP/s {peaks} ({gpu.source})."]
    if gpu.fp32_dot:
        rates = ", ".join(f"{k} {v:g}" for k, v in gpu.fp32_dot.items())
        lines.append(f"fp32-input tl.dot costed at measured TFLOP/s {rates}: {gpu.fp32_dot_source}.")
    elif gpu.name != gpu_peaks.DEFAULT:
        lines.append("fp32-input tl.dot: datasheet TF32 peak, tf32x3 as three TF32 dots; on the H200 this ranked "
                     "tf32x3 far ahead of ieee, and it ran slower: time them on the GPU before choosing.")
    if gpu.measured:
        lines.append(f"Measured: {gpu.measured}.")
    lines.append("The counts come from the configuration the interpreter ran (an autotuned kernel runs the one config "
                 "offered under TRITON_INTERPRET=1, or its first): a GPU's autotuner may pick another, with other "
                 "traffic.")
    return lines


def no_gpu_benchmark(service: Any, ref: Path, cand_paths: list[Path], base: dict[str, Any], gpu_name: str | None,
                     timeout_s: float, on_event: Any = None, cancel: threading.Event | None = None) -> BenchmarkReport:
    """run_benchmark without a GPU: every candidate counted and scaled, one ESTIMATE table, journal rows."""
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
                "ok": True, "verdict": LABEL, "interpreter": True, "measured_at": res.get("measured_at"),
                "measured_sizes": res.get("measured_sizes"), "full_sizes": res.get("full_sizes"),
                "scaled": res.get("scaled"), "reference_full": res.get("reference_full")})
    lines = table(rows, gpu)
    text = "\n".join(lines + [""] + footer(gpu))
    first = next((r for _, r in rows if r.get("ok")), {})
    notes = [CAVEAT, f"scaling rule: {first.get('scale_rule', '')}"] if first else [CAVEAT]
    if first:
        notes.append(f"counted at {first.get('measured_sizes')} ({first.get('measured_at')}); estimated for "
                     f"{first.get('estimated_for') or first.get('full_sizes')} (the problem's own sizes)")
    notes += [f"{stage}: {r['measured_note']}" for stage, r in rows if r.get("measured_note")]
    notes += [fit_line(stage, r) for stage, r in rows if r.get("ok") and (r.get("fit") or r.get("fit_note"))]
    for stage, r in rows:
        notes += resource_lines(stage, r.get("resources"))
    if (first.get("reference_full") or {}).get("bytes_source"):
        notes.append("the × column divides by the bytes the task sidecar's [bench] declares at full size (the op's "
                     "own reads and writes), not the reference's counted inputs + outputs")
    cmd = ["pytorch-to-triton", "bench", service.ws.relative(ref), *[service.ws.relative(p) for p in cand_paths],
           "--gpu", gpu.name]
    if base.get("sizes"):
        cmd += ["--sizes", ",".join(f"{k}={v}" for k, v in base["sizes"].items())]
    return BenchmarkReport(
        ok=all(r.get("ok") for _, r in rows), device="cpu (Triton interpreter): no GPU",
        verdict=f"{LABEL} only (no GPU): roofline on {gpu.name} from counted bytes and tl.dot FLOPs; not timed",
        reference=service.ws.relative(ref), notes=notes, summary=text, reproduce=shlex.join(cmd),
        peaks={"gpu": gpu.name, "bandwidth_gbs": gpu.bandwidth_gbs, "tflops": gpu.tflops, "source": gpu.source},
        estimate=[{"stage": s, **r, **({"times": times(r["scaled"], gpu)} if r.get("ok") else {})} for s, r in rows],
        runtime=next((dict(r["runtime"]) for _, r in rows if isinstance(r.get("runtime"), dict)), {}))


def resource_lines(stage: str, section: dict[str, Any] | None) -> list[str]:
    """The stage's launches compiled for the estimate's GPU on this CPU: one line per kernel (its first config's
    registers, spills, shared memory, occupancy; how many configs) and one per finding (spills, configs that cannot
    launch, compile failures)."""
    if not section:
        return []
    if section.get("error"):
        return [f"{stage}: no compile for the GPU ({section['error']})"]
    out: list[str] = []
    seen: dict[str, list[dict[str, Any]]] = {}
    for r in section.get("rows") or []:
        seen.setdefault(f"{r['kernel']} {r['target']}", []).append(r)
    where = f"compiled here with Triton {section.get('triton_version')}"
    for name, rs in seen.items():
        r = next((x for x in rs if x.get("ok")), rs[0])
        if not r.get("ok"):
            continue  # the finding below says it
        occ = f", occupancy {r['occupancy']:.0%} ({r.get('limited_by')})" if r.get("occupancy") is not None else ""
        out.append(f"{stage}: {name} ({where}; {r['config']}): {r.get('n_regs')} registers, {r.get('n_spills')} "
                   f"spilled, {r.get('shared')} B shared{occ}" + (f"; {len(rs)} configs" if len(rs) > 1 else ""))
    out += [f"{stage}: {f['severity'].upper()} {f['message']}" for f in section.get("findings") or []]
    return out


def report_lines(rows: list[tuple[str, dict[str, Any]]], gpu_name: str | None) -> list[str]:
    """The journal report's estimate section (journal rows hold the scaled counts; the GPU is chosen when read)."""
    if not rows:
        return []
    gpu = gpu_peaks.lookup(gpu_name)
    return ["", f"Roofline {LABEL} per stage (no GPU; `report --gpu NAME` for another GPU):", "",
            *table(rows, gpu), "", *footer(gpu)]
