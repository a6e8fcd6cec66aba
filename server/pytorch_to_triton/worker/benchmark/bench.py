"""run_benchmark inside the worker (GPU only), and audit's compiled analysis.

Method (library device/METHOD.md): correctness first; warm-up; triton.testing.do_bench medians with the
L2 flushed between repetitions; input sets rotated when they fit in L2; the whole measurement repeated
`repeats` times for the spread; peaks measured on this device, never taken from a datasheet.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ..device.runtime import RECORDER, Runtime, launch_hook
from ..validation import compare as cmp
from ..validation import kernelbench as kbench
from ..validation import memory
from ..validation.guards import PatchWatch
from ..validation.loader import load_task
from ..validation.nest import flatten as _flatten
from ..validation.nest import tensors as _tensors
from ..validation.poison import POISON
from ..validation.tasks import Case, Task, TaskError, dtype_from_name, dtype_name, upcast
from ..validation.validate import SHRINK_FIX
from . import roofline
from .peaks import (
    _bench,
    _host_bound_flags,
    _host_ms_per_call,
    _reset_l2_persistence,
    _sync,
    environment,
    measure_peaks,
    plausibility_flags,
    roofline_floor_ms,
)
from .specs import bench_cases

Emit = Callable[..., None]
BIG_SPEEDUP = 10.0  # above this, the speedup over eager is reported as information (row "info")


def _native_error(native: Any, ref64: Any) -> list[cmp.OwnError | None]:
    """PyTorch's own error vs float64 per output (compare.own_error; None where not comparable)."""
    return [cmp.own_error(n, r) if isinstance(n, torch.Tensor) and isinstance(r, torch.Tensor) else None
            for n, r in zip(_flatten(native), _flatten(ref64))]


def _raw(fn: Any) -> Any:
    """A KernelBench model as built, not the validator's state-keeping wrapper (kernelbench._from_built_state): the
    timings and torch.compile see the model itself."""
    return getattr(fn, "__wrapped__", fn)


def _recheck(fn: Callable[..., Any], ref_fn: Callable[..., Any], fresh: list[Any], dtype: torch.dtype,
             tols: dict[str, Any] | None, case: Any, own: list[cmp.OwnError | None] | None = None) -> str | None:
    """Re-run the candidate after timing on fresh inputs into poisoned memory; None when it is still right."""
    with torch.no_grad():
        expect = ref_fn(*fresh)
        POISON.float_value, POISON.int_offset, POISON.active = math.nan, 0, True
        try:
            got = fn(*fresh)
            if any(t.is_cuda for t in _tensors(_flatten(got))):
                _sync()
        finally:
            POISON.active = False
    # vs the native reference on other inputs: the case's Tolerance.vs_native (loose 2)
    good, why = _close(got, expect, dtype, 2.0, tols, case, own)
    if good:
        return None
    holes = sum(int((torch.isnan(o) & torch.isfinite(r)).sum()) for o, r in zip(_flatten(got), _flatten(expect))
                if isinstance(o, torch.Tensor) and isinstance(r, torch.Tensor) and o.is_floating_point()
                and o.shape == r.shape)
    if holes:
        return (f"output not written: after timing, {holes} output elements still hold the NaN poison of fresh "
                "memory where the reference is finite: the candidate skips work on repeated calls (a cache, an "
                "early exit) or its grid misses part of the output; run_validation on this case shows where")
    return (f"wrong on fresh inputs after timing ({why}): results cached across calls (keyed on shape or "
            "data_ptr) or state kept between calls; remove the cache and re-validate")


def _close(out: Any, ref: Any, dtype: torch.dtype, loose: float, tolerances: dict[str, Any] | None = None,
           case: Any = None, own: list[cmp.OwnError | None] | None = None) -> tuple[bool, str]:
    """Output vs reference under run_validation's Tolerance (the reference's TOLERANCES and the call's, plus
    PyTorch's own error `own` per output): against float64 (loose 1) element by element; against the reference in
    the input dtype (loose 2: no float64 run, or fresh inputs after timing) as Tolerance.vs_native."""
    outs, refs = _flatten(out), _flatten(ref)
    if len(outs) != len(refs):
        return False, f"{len(outs)} outputs, expected {len(refs)}"
    for i, (o, r) in enumerate(zip(outs, refs)):
        if not isinstance(r, torch.Tensor):
            continue
        if not isinstance(o, torch.Tensor) or o.shape != r.shape:
            return False, "output shape differs from the reference"
        tol = cmp.tolerance(o.dtype, tolerances, case, own[i] if own and i < len(own) else None)
        if loose == 1.0:
            m = cmp.compare(o, r, tol.rtol, tol.atol, own=tol.own)
        else:
            m = cmp.compare(o, r, *tol.vs_native(loose))
        if not m["ok"]:
            return False, f"{m['mismatches']} elements outside tolerance (max abs err {m['max_abs_err']:.3g})"
    return True, ""


def _autotune_report(mod: Any) -> dict[str, Any] | None:
    from triton.runtime.autotuner import Autotuner

    out = {}
    for name, obj in vars(mod).items() if mod is not None else []:
        if isinstance(obj, Autotuner):
            timings = getattr(obj, "configs_timings", None) or {}
            out[name] = {
                "key": list(getattr(obj, "keys", []) or getattr(obj, "key", []) or []),
                "chosen": {str(k): str(v) for k, v in (getattr(obj, "cache", {}) or {}).items()},
                "configs_tried": {str(c): [round(float(x), 5) for x in (t if isinstance(t, (list, tuple)) else [t])]
                                  for c, t in timings.items()},
            }
    return out or None


def run_benchmark(args: dict[str, Any], rt: Runtime, emit: Emit, patches: PatchWatch) -> dict[str, Any]:
    """Time eager, torch.compile and every candidate on each case; roofline; sanity flags."""
    if rt.device != "cuda":
        return {"error_usage": "run_benchmark needs a CUDA GPU and the worker found none; timing under Triton's "
                "CPU interpreter would be meaningless. Use run_validation here, or run on a GPU machine"}
    ref_path = Path(args["reference"])
    base = load_task(ref_path, None, args.get("reference_entry"), None, "cuda")
    from .formulas import install as _sidecar_formulas

    _sidecar_formulas(base.ref_mod, args)  # [bench] bytes/flops of the task sidecar become BYTES/FLOPS
    cand_tasks = []
    notes: list[str] = []
    for path, display in zip(args["candidates"], args["candidate_displays"]):
        try:
            cand_tasks.append((display, load_task(ref_path, Path(path), args.get("reference_entry"),
                                                  args.get("candidate_entry"), "cuda")))
        except TaskError:
            raise
        except Exception as e:  # noqa: BLE001
            cand_tasks.append((display, e))
    dtype = dtype_from_name(args.get("dtype") or (getattr(base.ref_mod, "DTYPES", None) or ["float32"])[0])
    peaks, peaks_measured = measure_peaks(args.get("peaks_known") or {}, rt, emit)
    env = environment(rt)
    env["l2_persistence"] = _reset_l2_persistence()
    env["l2_cache_mb"] = round(getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) / 2**20, 1)
    specs = bench_cases(base, args)
    tols = cmp.merged_tolerances(base.ref_mod, args.get("tolerances"))  # the same tolerances as run_validation
    if base.kernelbench:  # no dtype asked: the problem's own inputs, labelled with their dtype
        dtype = kbench.bench_setup(base, cand_tasks, specs, args, dtype)
    compiled_ref, compiled_of, mode = None, None, args.get("compile", "default")
    explained: dict[str, Any] | None = None
    timings: list[dict[str, Any]] = []
    total = len(specs) * (2 + len(cand_tasks))
    step = 0
    for case_name, shape, x in specs:
        case = Case(case_name, shape, dtype, "cuda", 0)
        cands = kbench.prepare_for_bench(base, cand_tasks, case) if base.kernelbench else cand_tasks
        if mode != "none" and compiled_of is not _raw(base.ref_fn):  # KernelBench: new sizes may mean a new model
            compiled_ref = torch.compile(_raw(base.ref_fn), mode=None if mode == "default" else mode)
            compiled_of = _raw(base.ref_fn)
        fp64_fits = _fits(base, case, case_name)  # refuses (usage error) a case that cannot fit, before allocating
        try:
            inputs = base.make_inputs(case)
        except torch.OutOfMemoryError as e:
            memory.forget(e)
            raise TaskError("memory", f"case {case_name}: its inputs do not fit in GPU memory "
                            f"({memory.gib(memory.free_bytes('cuda')[0])} free); {SHRINK_FIX}", usage=True) from None
        counted: float | None = None
        if callable(getattr(base.ref_mod, "FLOPS", None)):
            with torch.no_grad():
                ref_out = _raw(base.ref_fn)(*inputs)
        else:  # no declared FLOPS (KernelBench, a user's model): count them during this one reference call
            try:
                ref_out, counted = roofline.call_counting_flops(_raw(base.ref_fn), inputs)
            except Exception:  # noqa: BLE001 - an op the counter cannot trace: no FLOPs figure, same error if real
                with torch.no_grad():
                    ref_out = _raw(base.ref_fn)(*inputs)
        _sync()
        ref_check, loose = ref_out, 2.0
        try:
            if fp64_fits:  # a KernelBench model needs float64 weights too, as run_validation's _ref64 does
                fn64 = copy.deepcopy(base.ref_model).double() if base.kernelbench else _raw(base.ref_fn)
                with torch.no_grad():
                    ref_check, loose = fn64(*upcast(inputs)), 1.0
                del fn64
        except Exception as e:  # noqa: BLE001 - no float64 path: compare to the native reference, loosened 2x
            memory.forget(e)
            ref_check, loose = ref_out, 2.0
            torch.cuda.empty_cache()
        own = _native_error(ref_out, ref_check) if loose == 1.0 else None
        in_bytes = sum(t.numel() * t.element_size() for t in _tensors(inputs))
        work = roofline.work_of(base.ref_mod, case, inputs, _flatten(ref_out), counted, base.ref_model)
        moved, flops = work.bytes, work.flops
        l2 = env["l2_cache_mb"] * 2**20
        n_sets = 1 if in_bytes == 0 or in_bytes > 2 * l2 else min(8, math.ceil(4 * l2 / in_bytes))
        sets = [inputs] + [base.make_inputs(Case(case_name, shape, dtype, "cuda", s)) for s in range(1, n_sets)]
        impls: list[tuple[str, Any, Any]] = [("eager", _raw(base.ref_fn), None)]
        if compiled_ref is not None:
            impls.append(("torch.compile", compiled_ref, None))
        impls += [(d, _raw(t.cand_fn) if isinstance(t, Task) else t, t.cand_mod if isinstance(t, Task) else None)
                  for d, t in cands]
        case_rows = []
        for impl, fn, mod in impls:
            step += 1
            emit("progress", message=f"timing {impl} on {case_name} ({dtype_name(dtype)})", progress=step, total=total)
            row: dict[str, Any] = {"impl": impl, "case": case_name, "ok": False, "x": x,
                                   "shape": [list(t.shape) for t in _tensors(inputs)], "dtype": dtype_name(dtype)}
            if isinstance(shape, dict):
                row["sizes"] = dict(shape)  # KernelBench: the module-level sizes this row ran at
            case_rows.append(row)
            if isinstance(fn, Exception):
                row["error"] = f"import failed: {type(fn).__name__}: {fn}"
                continue
            try:
                RECORDER.reset()
                t0 = time.perf_counter()
                with torch.no_grad(), launch_hook(not RECORDER.interpreter):  # a compiled launcher's launches too
                    out = fn(*inputs)
                _sync()
                row["first_call_ms"] = round((time.perf_counter() - t0) * 1e3, 3)
                launches = RECORDER.count
                if impl not in ("eager", "torch.compile"):
                    good, why = _close(out, ref_check, dtype, loose, tols, case, own)
                    if not good:
                        row["error"] = f"wrong result on the benchmark inputs, not timed: {why}"
                        continue
                    if launches == 0:
                        row["suspect"] = ["no Triton kernel launched: the candidate computed with PyTorch (or "
                                          "an early-return path), so this times PyTorch; validate and fix "
                                          "pytorch_compute / no_triton_launch"]
                out = None  # the first call's outputs are checked; the timed calls allocate their own
                counter = [0]

                def call(fn: Any = fn, sets: list[Any] = sets, counter: list[int] = counter) -> Any:
                    counter[0] += 1
                    return fn(*sets[counter[0] % len(sets)])

                reps = []
                with torch.no_grad():
                    for _ in range(int(args.get("repeats", 3))):
                        reps.append(_bench(call, args.get("warmup_ms", 25.0), args.get("rep_ms", 100.0),
                                           bool(args.get("cuda_graph"))))
                    torch.cuda.reset_peak_memory_stats()
                    base_mem = torch.cuda.memory_allocated()
                    fn(*inputs)
                    _sync()
                    row["peak_mem_mb"] = round((torch.cuda.max_memory_allocated() - base_mem) / 2**20, 2)
                meds = sorted(r[0] for r in reps)
                med = meds[len(meds) // 2]
                row.update(ok=True, median_ms=med, p20_ms=sorted(r[1] for r in reps)[len(reps) // 2],
                           p80_ms=sorted(r[2] for r in reps)[len(reps) // 2], min_ms=min(r[3] for r in reps),
                           repeats_ms=[round(m, 5) for m in meds],
                           spread_pct=round((meds[-1] - meds[0]) / med * 100, 2) if med > 0 else None,
                           input_sets=len(sets), timer="do_bench_cudagraph" if args.get("cuda_graph") else "do_bench")
                with torch.no_grad():
                    row["host_ms_per_call"] = round(_host_ms_per_call(call), 5)
                flags = _host_bound_flags(row, bool(args.get("cuda_graph")))
                if flags:
                    row.setdefault("suspect", []).extend(flags)
                row["gbps"] = moved / med / 1e6 if med > 0 else None
                row["pct_peak_bw"] = 100 * row["gbps"] / peaks["copy_gbps"] if row["gbps"] else None
                if flops:
                    row["tflops"] = flops / med / 1e9
                    row["pct_peak_flops"] = 100 * row["tflops"] / peaks["bf16_matmul_tflops"]
                row.update(bytes=moved, flops=flops, bytes_source=work.bytes_source, flops_source=work.flops_source,
                           roofline_ms=roofline_floor_ms(work, peaks, l2, bool(args.get("cuda_graph")), dtype)[0])
                implausible = plausibility_flags(med, work, peaks, l2, bool(args.get("cuda_graph")), dtype)
                if any(f.startswith("no Triton kernel launched") for f in row.get("suspect", [])):
                    row["ok"] = False  # the number is PyTorch's, not the candidate's kernel
                if implausible:
                    row.setdefault("suspect", []).extend(implausible)
                    if impl not in ("eager", "torch.compile"):
                        row["ok"] = False
                if impl not in ("eager", "torch.compile"):
                    fresh = base.make_inputs(Case(case_name, shape, dtype, "cuda", 12345))
                    why = _recheck(fn, base.ref_fn, fresh, dtype, tols, case, own)
                    if why:
                        row.setdefault("suspect", []).append(why)
                        row["ok"] = False
                    row["autotune"] = _autotune_report(mod)
                    row["patched"] = patches.check_and_restore() or None
                    if row["patched"]:
                        row.setdefault("suspect", []).append(
                            f"patched {row['patched']}: the candidate replaced timers or comparison functions "
                            "(restored), so its timing cannot be trusted; remove the patch")
                        row["ok"] = False
            except torch.OutOfMemoryError as e:
                row.update(ok=False, error=f"out of GPU memory: {str(e)[:200]}")
                memory.forget(e)  # its frames hold the row's tensors
            except Exception as e:  # noqa: BLE001 - one implementation failing must not hide the others
                row.update(ok=False, error=f"{type(e).__name__}: {str(e)[:500]}")
                memory.forget(e)
            out = fresh = None  # this row's outputs go before the next row allocates its own
            torch.cuda.empty_cache()
        _speedups(case_rows, peaks)
        timings.extend(case_rows)
        if args.get("explain") and explained is None:  # torch.compile's plan of the reference, at the first case
            from .explain import explain_call

            emit("progress", message=f"explain: torch.compile's kernels for the reference on {case_name}")
            explained = explain_call(_raw(base.ref_fn), inputs, "cuda", None if mode == "none" else mode, case_name)
            compiled_of = None  # explain reset dynamo: a later case compiles the baseline afresh
        del sets, inputs
        ref_out = ref_check = None
        memory.release("cuda")
    ok = report_ok(timings)
    out = {"ok": ok, "verdict": _verdict(timings), "device": "cuda", "timings": timings, "peaks": peaks,
           "peaks_measured": peaks_measured, "environment": env, "notes": notes, "summary": _summary(timings, env, peaks)}
    if explained is not None:
        out["explain"] = explained
    return out


def _speedups(rows: list[dict[str, Any]], peaks: dict[str, Any]) -> None:
    by = {r["impl"]: r for r in rows if r.get("median_ms")}
    for r in rows:
        if not r.get("median_ms"):
            continue
        for basename, key in (("eager", "vs_eager"), ("torch.compile", "vs_compile")):
            b = by.get(basename)
            if b is None or r is b:
                continue
            r[f"speedup_{key}"] = b["median_ms"] / r["median_ms"]
            # Significant only when the gap exceeds both run-to-run ranges.
            noise = (max(b["repeats_ms"]) - min(b["repeats_ms"])) + (max(r["repeats_ms"]) - min(r["repeats_ms"]))
            r[f"significant_{key}"] = abs(b["median_ms"] - r["median_ms"]) > noise
        r.setdefault("suspect", [])
        if r["impl"] not in ("eager", "torch.compile") and (r.get("speedup_vs_eager") or 0) > BIG_SPEEDUP:
            # A fact, not a suspicion: fusing a chain of eager ops often wins by 10x or more; whether the number
            # is believable is what the roofline floor (plausibility_flags) and the rechecks decide.
            r.setdefault("info", []).append(f"{r['speedup_vs_eager']:.1f}x faster than eager (information: eager "
                                            "runs one kernel per op; plausibility is checked against the roofline)")


def report_ok(rows: list[dict[str, Any]]) -> bool:
    """The benchmark's ok: something was timed, every candidate row is ok, and no row (a baseline's neither:
    without it there is no comparison) carries an error."""
    return (bool(rows) and all(r["ok"] for r in rows if r["impl"] not in ("eager", "torch.compile"))
            and not any(r.get("error") for r in rows))


def _fits(task: Task, case: Case, name: str) -> bool:
    """Whether the float64 check fits next to the case; a case that cannot fit at all is refused (usage error)."""
    kb = task.kernelbench
    est = memory.estimate(lambda: task.make_inputs(case if kb else Case(case.name, case.shape, case.dtype, "meta",
                                                                         case.seed, case.scale)),
                          (lambda xs: task.ref_model(*xs)) if kb else (lambda xs: task.ref_fn(*xs)), "cuda")
    if est is None:
        return True  # no estimate possible: try; an OOM then fails the row that hit it
    free, where = memory.free_bytes("cuda")
    if est.bench_need(True) <= free:
        return True
    need = est.bench_need(False)
    if need <= free:
        return False
    raise TaskError("inputs", f"case {name} needs about {memory.gib(need)} to benchmark ({est.describe()}; the "
                    f"reference's outputs, a candidate's outputs on two calls and the recheck) but "
                    f"{memory.gib(free)} of {where} are free; {SHRINK_FIX}", usage=True)


def _verdict(rows: list[dict[str, Any]]) -> str:
    failed = [r for r in rows if r.get("error")]
    if failed:
        r = failed[0]
        return (f"{len(failed)} timing row(s) failed: {r['impl']} [{r['case']}]: {r['error']}"
                + ("" if len(failed) == 1 else f"; also {', '.join(f['impl'] for f in failed[1:4])}"))
    cands = [r for r in rows if r["impl"] not in ("eager", "torch.compile")]
    if not cands:
        return "baselines timed (no candidates given)"
    bad = [r for r in cands if not r["ok"]]
    if bad:
        return f"{len(bad)} of {len(cands)} candidate timings failed or are suspect: {bad[0]['impl']}: " \
               f"{bad[0].get('error') or '; '.join(bad[0].get('suspect', []))}"
    best = min(cands, key=lambda r: r["median_ms"])
    parts = [f"fastest candidate {best['impl']} {best['median_ms']:.4f} ms"]
    if best.get("speedup_vs_eager"):
        parts.append(f"{best['speedup_vs_eager']:.2f}x vs eager")
    if best.get("speedup_vs_compile"):
        sig = "" if best.get("significant_vs_compile") else " (not significant)"
        parts.append(f"{best['speedup_vs_compile']:.2f}x vs torch.compile{sig}")
    return ", ".join(parts)


def _summary(rows: list[dict[str, Any]], env: dict[str, Any], peaks: dict[str, Any]) -> str:
    lines = [f"run_benchmark on {env.get('gpu')} (torch {env.get('torch')}, triton {env.get('triton')}); measured "
             f"peaks: copy {peaks['copy_gbps']:.0f} GB/s, read {peaks.get('read_gbps') or 0:.0f} GB/s, "
             f"bf16 matmul {peaks['bf16_matmul_tflops']:.0f} TFLOP/s"]
    for r in rows:
        if r.get("median_ms") is None:
            lines.append(f"  {r['impl']} [{r['case']}]: not timed: {r.get('error')}")
            continue
        extra = []
        if r.get("gbps"):
            extra.append(f"{r['gbps']:.0f} GB/s ({r['pct_peak_bw']:.0f}% of copy)")
        if r.get("tflops"):
            extra.append(f"{r['tflops']:.0f} TFLOP/s ({r['pct_peak_flops']:.0f}%, FLOPs {r.get('flops_source')})")
        for key, label in (("speedup_vs_eager", "eager"), ("speedup_vs_compile", "compile")):
            if r.get(key):
                sig = "" if r.get(key.replace("speedup", "significant")) else "~"
                extra.append(f"{sig}{r[key]:.2f}x vs {label}")
        if r.get("suspect"):
            extra.append("SUSPECT: " + "; ".join(r["suspect"]))
        if r.get("info"):
            extra.append("(" + "; ".join(r["info"]) + ")")
        lines.append(f"  {r['impl']} [{r['case']}]: {r['median_ms']:.4f} ms (p20 {r['p20_ms']:.4f}, p80 "
                     f"{r['p80_ms']:.4f}, spread {r['spread_pct']}%) " + ", ".join(extra))
    return "\n".join(lines)


def compiled_analysis(args: dict[str, Any], rt: Runtime, emit: Emit, patches: PatchWatch) -> dict[str, Any]:
    """Compile the candidate on representative inputs; registers, spills, PTX/SASS facts per kernel."""
    if rt.device != "cuda":
        return {"kernels": [], "skipped": "compiled analysis skipped: no GPU (Triton interpreter on CPU)"}
    from ..device.compiled import compiled_facts, findings_from_compiled

    task = load_task(Path(args["reference"]), Path(args["candidate"]), None, None, "cuda")
    (case_name, shape, _), = bench_cases(task, {})[:1]
    dtype = dtype_from_name((getattr(task.ref_mod, "DTYPES", None) or ["float32"])[0])
    inputs = task.make_inputs(Case(case_name, shape, dtype, "cuda", 0))
    RECORDER.compiled.clear()
    with torch.no_grad():
        task.cand_fn(*inputs)
    _sync()
    props = torch.cuda.get_device_properties(0)
    dprops = {"sm_count": props.multi_processor_count, "regs_per_sm": getattr(props, "regs_per_multiprocessor", 65536),
              "max_threads_per_sm": getattr(props, "max_threads_per_multi_processor", 2048),
              "smem_per_sm": getattr(props, "shared_memory_per_multiprocessor", 233472),
              "smem_per_block_optin": getattr(props, "shared_memory_per_block_optin", 232448),
              "capability": f"{props.major}.{props.minor}", "name": props.name}
    kernels = []
    for name, k in RECORDER.compiled.items():
        md = k.metadata
        meta = {f: getattr(md, f, None) for f in ("num_warps", "num_stages", "shared", "num_ctas")}
        for f in ("n_regs", "n_spills", "n_max_threads"):
            meta[f] = getattr(k, f, None)
        asm = {}
        for key in ("ptx", "sass", "ttgir"):
            try:
                asm[key] = k.asm[key]
            except Exception:  # noqa: BLE001 - sass needs nvdisasm; ptx is enough for most facts
                continue
        facts = compiled_facts(name, asm, meta, dprops)
        kernels.append({"kernel": name, "facts": facts,
                        "findings": [f.model_dump(mode="json") if hasattr(f, "model_dump") else f
                                     for f in findings_from_compiled(facts)]})
    return {"kernels": kernels, "case": case_name, "device": dprops}
