"""A roofline ESTIMATE of one candidate without a GPU: its counted traffic and tl.dot work, scaled to full size.

The candidate runs once under Triton's interpreter at a size it can finish (the validated size: KernelBench's
shrunk main case, or for a make_inputs reference its bench shape halved until the interpreter runs it quickly
(halved_shape), or the benchmark's own case when that is small enough), with interp_traffic.counting() around the
call. Where the count point differs from the full size, each count is then fitted per size (a KernelBench size, or a
bench-shape dimension) and extrapolated (FIT_RULE, checked on a held-back run); the ratio rule below is the fallback. The counts are
then scaled to the size run_benchmark would time (the problem's full size) by one rule, stated in the answer:

    bytes x (reference's compulsory bytes at full size / at the measured size)
    FLOPs x (reference's FLOPs at full size / at the measured size)   [bytes' ratio when it counts no FLOPs]
    loads of a launch that runs tl.dot x the FLOPs' ratio: a tiled matmul or attention rereads its operand tiles
    once per output tile, so its loads grow with M N K (4 (M K N / BN + K N M / BM) bytes), not with M K + K N

where "compulsory bytes" are inputs + outputs (+ an nn.Module's parameters) and the reference's FLOPs are counted
by torch's FlopCounterMode, both on fake tensors (nothing is allocated at full size). The rule holds for kernels
whose traffic grows with the problem; block-size effects (a grid rounded up to whole blocks, reread tiles of a
matmul) scale only approximately. The server divides the scaled figures by a GPU's peaks (gpu_peaks.py).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import torch

from ..device import interp_traffic, target_compile
from ..validation import cases as cs
from ..validation import kernelbench as kbench
from ..validation import sizes as sz
from ..validation.loader import load_task
from ..validation.nest import tensors_in
from ..validation.tasks import Case, Task, TaskError, dtype_from_name

# Measure at the benchmark's own size when its inputs + outputs are at most this many elements; the interpreter runs
# ~1e6 elements of a vector add per second, so this stays a few seconds per candidate.
MEASURE_MAX_ELEMS = 1 << 20
# ... and at most this many reference FLOPs: the interpreter runs a tl.dot tile loop at about 1e7 FLOPs per second
# on a loaded 2-core VM (fused linear + cross-entropy stage 1 at 512 x 512 x 1002, 1.6e9 FLOPs: over 12 minutes),
# and the fit counts about ten times the count point's work.
MEASURE_MAX_FLOPS = 1 << 25
# A halved bench shape is counted about ten times (the fit doubles each dimension, then the held-back run), so its
# point is smaller: cross-entropy at 1024 x 1002 took 200 s a stage on that VM.
HALVE_MAX_ELEMS = 1 << 18
RULE = ("bytes scaled by the reference's inputs + outputs (+ parameters) bytes at full size over those at the measured "
        "size; FLOPs, and the loads of launches that run tl.dot (tiles reread per output tile), by the reference's "
        "FlopCounterMode FLOPs at full over measured (bytes' ratio when it counts none)")


def _fake_bytes(value: Any) -> int:
    """Bytes of every tensor in a value, each tensor once (fake tensors have no data pointer to compare)."""
    seen: set[int] = set()
    total = 0
    for t in tensors_in(value):
        if id(t) not in seen:
            seen.add(id(t))
            total += t.numel() * t.element_size()
    return total


def _fake_work(run: Any) -> tuple[float, float]:
    """(compulsory bytes, FLOPs) of `run()` -> (inputs, output, model) on fake tensors."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.utils.flop_counter import FlopCounterMode

    with FakeTensorMode(allow_non_fake_inputs=True), torch.no_grad():
        counter = FlopCounterMode(display=False)
        with counter:
            inputs, out, model = run()
        params = list(model.parameters()) + list(model.buffers()) if isinstance(model, torch.nn.Module) else []
        return float(_fake_bytes(inputs) + _fake_bytes(out) + _fake_bytes(params)), float(counter.get_total_flops())


def _kb_work(task: Task, sizes: dict[str, int]) -> tuple[float, float]:
    mod = task.ref_mod

    def run() -> tuple[Any, Any, Any]:
        inputs = list(mod.get_inputs())
        model = mod.Model(*list(getattr(mod, "get_init_inputs", list)()))
        return inputs, model(*inputs), model

    with sz.sized(mod, sizes):
        return _fake_work(run)


def _form_a_work(task: Task, shape: Any, dtype: torch.dtype, device: str) -> tuple[float, float]:
    def run() -> tuple[Any, Any, Any]:
        inputs = task.make_inputs(Case("estimate", shape, dtype, device, 0, 1.0))
        return inputs, task.ref_fn(*inputs), None

    return _fake_work(run)


def _elems(nbytes_: float, dtype: torch.dtype) -> float:
    return nbytes_ / max(1, torch.empty((), dtype=dtype).element_size())


def _plan_kernelbench(task: Task, args: dict[str, Any], device: str) -> tuple[Any, Any, torch.dtype, str]:
    """(where to count, what to estimate for, dtype, label). The estimate is always for the problem's own sizes:
    sizes= (or the sidecar's [sizes], pinned for the interpreter) only say where to count (issue 40: they were
    called "the full size itself" and the estimate was for them)."""
    full = kbench.bench_specs(task, {})[0][1]
    dtype = dtype_from_name(args["dtype"]) if args.get("dtype") else kbench.native_dtype(task, full)
    try:
        full_bytes, _ = _kb_work(task, full)
    except Exception:  # noqa: BLE001 - no fake-tensor run: measure at the validated size
        full_bytes = float("inf")
    if not args.get("sizes") and _elems(full_bytes, dtype) <= MEASURE_MAX_ELEMS:
        return full, full, dtype, "the full size itself"
    main = cs.plan(task.ref_mod, device, args.get("sizes"), None).main.sizes
    if args.get("sizes"):
        return main, full, dtype, "your sizes= (a count point; the estimate is for the problem's own sizes)"
    return main, full, dtype, ("the validated (shrunk) size" if main != full else "the full size itself")


def _plan_form_a(task: Task, args: dict[str, Any], device: str) -> tuple[Any, Any, torch.dtype, str]:
    from .bench import bench_cases

    full = bench_cases(task, {k: args.get(k) for k in ("cases", "sweep")})[0][1]
    names = [args["dtype"]] if args.get("dtype") else list(getattr(task.ref_mod, "DTYPES", None) or ["float32"])
    dtype = dtype_from_name(names[0])
    try:
        full_bytes = _form_a_work(task, full, dtype, device)[0]
    except Exception:  # noqa: BLE001
        full_bytes = float("inf")
    if _elems(full_bytes, dtype) <= MEASURE_MAX_ELEMS:
        return full, full, dtype, "the benchmark's own size"
    if isinstance(full, (tuple, list)) and all(isinstance(d, int) for d in full):
        def fits(shape: tuple[int, ...]) -> bool:
            nbytes, flops = _form_a_work(task, shape, dtype, device)
            return _elems(nbytes, dtype) <= HALVE_MAX_ELEMS and flops <= MEASURE_MAX_FLOPS

        small = halved_shape(tuple(full), fits)
        if small is not None:  # the bench shape itself, smaller: the candidate runs the path it runs at full size
            return small, full, dtype, "the benchmark's shape halved to fit the interpreter"
    sized: list[tuple[float, Any]] = []
    for spec in cs.form_a_specs(task.ref_mod, [names[0]], None, False):
        try:
            sized.append((_form_a_work(task, spec.shape, dtype, device)[0], spec.shape))
        except Exception:  # noqa: BLE001 - a shape the fake run cannot take is not a candidate to measure at
            continue
    fits = [s for s in sized if s[0] > 0 and _elems(s[0], dtype) <= MEASURE_MAX_ELEMS]
    if not fits:
        raise TaskError("inputs", "no validation case is small enough to run under the interpreter for an "
                        "estimate; add a smaller entry to SHAPES", usage=True)
    return max(fits, key=lambda s: s[0])[1], full, dtype, "the largest validation case"


HALVE_FLOOR = 256  # no dimension is halved below this (or its full size) while another can shrink: 2 x a 128 tile


def halved_shape(full: tuple[int, ...], fits: Any) -> tuple[int, ...] | None:
    """The bench shape with dimensions halved until `fits(shape)`: the largest above HALVE_FLOOR first (the leading
    one on a tie), then the outermost leading one (batch, heads: a 32-row attention tile padded to 128 would be
    counted four times over), the last one only when nothing else can shrink. Counting at the
    bench shape's own proportions keeps the candidate on the code path it takes at full size where the largest
    validation case did not (softmax stage 3 counted at 3 x 20000 took its two-pass long-row path, 1.5x the bytes of
    the one-pass path it runs at 16384 x 4096); a kernel that switches paths below HALVE_FLOOR-sized dimensions is
    still counted on the other path. A halving the reference refuses (fits raises) is undone and that dimension
    frozen; None when nothing fits."""
    seen: dict[tuple[int, ...], bool | None] = {}

    def ok(shape: tuple[int, ...]) -> bool | None:  # None: the reference refuses the shape
        if shape not in seen:
            try:
                seen[shape] = bool(fits(shape))
            except Exception:  # noqa: BLE001
                seen[shape] = None
        return seen[shape]

    s, frozen = list(full), set()
    while not ok(tuple(s)):
        free = [i for i in range(len(s)) if i not in frozen]
        big = [i for i in free if s[i] > HALVE_FLOOR]
        outer = [i for i in free if i < len(s) - 1 and s[i] > 1]
        if big:
            i = max(big, key=lambda j: (s[j], -j))
        elif outer or (s[-1] > 1 and len(s) - 1 in free):
            i = outer[0] if outer else len(s) - 1  # batch and heads before rows and columns
        else:
            return None
        before, s[i] = s[i], (s[i] + 1) // 2
        if ok(tuple(s)) is None:
            s[i] = before
            frozen.add(i)
    return tuple(s)


def _count(task: Task, sizes: Any, dtype: torch.dtype, device: str, seed: int) -> tuple[Any, int | None]:
    """One counted call of the candidate at `sizes`; the counter and the widest block its launches used."""
    from ..device.runtime import RECORDER

    case = Case("estimate", sizes, dtype, device, seed, 1.0)
    if task.kernelbench:
        task.prepare(case)
    inputs = task.make_inputs(case)
    RECORDER.record_blocks(True)
    try:
        with interp_traffic.counting() as counter:
            task.cand_fn(*inputs)
        return counter, RECORDER.widest_block()
    finally:
        RECORDER.record_blocks(False)


def _resources(args: dict[str, Any], rt: Any) -> dict[str, Any] | None:
    """The counted launches compiled for the estimate's GPU (its compute capability; sm_90 unless named): per kernel
    and config, registers, spills, shared memory and occupancy, and the findings they make (target_compile.py)."""
    from ..device.runtime import RECORDER

    specs = RECORDER.launch_specs()
    RECORDER.record_launches(False)
    if not specs:
        return None
    try:
        targets = target_compile.parse_targets(args.get("target_gpus") or args.get("gpu"))
    except ValueError:  # a GPU name the compile does not know (the roofline may still): the default target
        targets = target_compile.parse_targets(None)
    if not targets:
        return None
    section = target_compile.compile_now(target_compile.TargetCompiler(targets, rt.triton_version), specs, [])
    if "error" not in section:
        section["findings"] = [{k: f[k] for k in ("check", "severity", "message", "fix")}
                               for f in target_compile.judge(section)]
    return section


GROW_MAX_ELEMS = 16 * MEASURE_MAX_ELEMS  # a re-count past the blocks may cost this much more than the first


def _past_the_blocks(task: Task, measured: dict[str, int], full: dict[str, int], block: int | None) \
        -> dict[str, int] | None:
    """Sizes where no varied size sits inside one of the candidate's blocks (each smaller than the block grows to
    two blocks, or the full size), with the problem's relations kept; None when nothing grows or it costs too much.
    A 128-wide tile over 32 rows computes 4x the work it needs: scaled 10000x to full size, that padding ranked a
    trial's faster stage slower."""
    if not block:
        return None
    mod = task.ref_mod
    defaults = dict(full)  # the problem's sizes (the module holds the measured ones now)
    structural = set(sz.ratios(mod, defaults, list(defaults)).values())  # n_head: a structure, not a size to tile
    vary = [k for k in sz.varied(defaults, {}, sz.derived(mod)) if k not in structural]
    grow = {k: min(full.get(k, measured[k]), 2 * block) for k in vary if k in measured and measured[k] < block}
    grow = {k: v for k, v in grow.items() if v > measured[k]}
    if not grow:
        return None
    new = sz.settle(mod, sz.repair({**measured, **grow}, sz.relations(defaults, vary), keep=set(grow)), ())
    elems, ok = sz.footprint(mod, new)
    if ok is False or (elems is not None and elems > GROW_MAX_ELEMS):
        return None
    return new


HELD_BACK = 1.5  # every fitted size about x1.5 at once (rounded to the blocks, as the problem's size is aligned)
HELD_BACK_MAX = 4  # the held-back size stays below the problem's own and at most this many times the count point
FIT_MAX_SIZES = 4  # sizes fitted one by one (each costs one more counted run); more fall back to the ratio rule
FIT_RULE = ("each count (loads, stores, unique bytes, tl.dot FLOPs per precision) fitted as c * prod(size_k ** e_k) "
            "from one counted run at the count point and one per size with that size doubled, then extrapolated to "
            "the problem's own sizes; checked on a held-back run with every fitted size about x1.5, aligned to the "
            "candidate's widest block as the problem's own size is")


def _quantities(totals: dict[str, Any]) -> dict[str, float]:
    out = {k: float(totals[k] or 0.0) for k in ("load_bytes", "store_bytes", "unique_bytes")
           if totals.get(k) is not None}
    out.update({f"dot_flops:{k}": float(v) for k, v in (totals.get("dot_flops") or {}).items()})
    return out


def _moved(task: Task, base: dict[str, int], k: str, factor: float, rels: Any) -> dict[str, int] | None:
    """`base` with size k times `factor` (relations of order kept, derived sizes following); None if rejected."""
    mod = task.ref_mod
    new = sz.settle(mod, sz.repair({**base, k: max(base[k] + 1, round(base[k] * factor))},
                                   [r for r in rels if r[0] == "le"], keep={k}), ())
    return new if sz.footprint(mod, new)[1] is not False else None


def fit_counts(base_q: dict[str, float], base: dict[str, int], runs: dict[str, tuple[dict[str, int], dict[str, float]]]) \
        -> dict[str, dict[str, float]]:
    """size -> {quantity: exponent}: how each count grows with that size alone, from the count point and one run
    with that size moved (log of the count's ratio over log of the size's)."""
    import math

    out: dict[str, dict[str, float]] = {}
    for k, (sizes, q) in runs.items():
        r = sizes[k] / base[k]
        out[k] = {name: (math.log(q[name] / v) / math.log(r) if v > 0 and q.get(name, 0) > 0 else 0.0)
                  for name, v in base_q.items()}
    return out


def predict(base_q: dict[str, float], base: dict[str, int], exps: dict[str, dict[str, float]],
            at: dict[str, int]) -> dict[str, float]:
    """Each count at sizes `at` by the fitted power laws (sizes not fitted stay as counted)."""
    out = {}
    for name, v in base_q.items():
        f = 1.0
        for k, e in exps.items():
            f *= (at[k] / base[k]) ** e[name]
        out[name] = v * f
    return out


def held_back_size(base: int, full: int, block: int | None) -> int | None:
    """The held-back run's value of one fitted size: about x1.5 the count point, aligned to the blocks as the
    problem's own size is (padding the full size never has is no error), but below the problem's own size and at most
    HELD_BACK_MAX times the count point (a 2026-12-06 trial's 16-wide image grew to 272 for a 256 problem: a check run
    larger than the problem); unaligned when alignment would pass those; None when no size lies in between."""
    align = min(block or 1, full & -full) if full > 0 else 1
    target = max(base + align, round(base * HELD_BACK / align) * align)
    if target > min(full, HELD_BACK_MAX * base):
        target = max(base + 1, round(base * HELD_BACK))
    return target if target < full else None


def _fit(task: Task, base: dict[str, int], full: dict[str, int], base_q: dict[str, float], dtype: torch.dtype,
         device: str, seed: int, emit: Any, who: str, block: int | None = None) -> dict[str, Any] | None:
    """Counts at the problem's own sizes from a fit over small counted runs, with the fit's error on a held-back
    run; None when it cannot fit (too many sizes, a size the reference will not move)."""
    mod = task.ref_mod
    keys = [k for k in sz.varied(sz.size_constants(mod), {}, sz.derived(mod)) if full.get(k) != base.get(k)
            and base.get(k)]
    if not keys or len(keys) > FIT_MAX_SIZES:
        return None
    rels = sz.relations(full, keys)
    runs: dict[str, tuple[dict[str, int], dict[str, float]]] = {}
    for k in keys:
        moved = _moved(task, base, k, 2.0, rels)
        if moved is None or any(moved[q] != base[q] for q in keys if q != k):
            return None  # the size cannot move alone: its growth is not separable from another's
        emit("progress", message=f"{who}: counting at {sz.fmt(moved)} (fit: {k} doubled)", progress=0, total=1)
        counter, _ = _count(task, moved, dtype, device, seed)
        runs[k] = (moved, _quantities(counter.totals()))
    exps = fit_counts(base_q, base, runs)
    held = dict(base)
    for k in keys:  # aligned to the blocks as the problem's own size is: padding the full size never has is no error
        target = held_back_size(base[k], full[k], block)
        if target is not None:
            held = _moved(task, held, k, target / held[k], rels) or held
    out: dict[str, Any] = {"sizes": keys, "exponents": exps, "count_point": dict(base), "estimated_for": dict(full)}
    if held != base:
        emit("progress", message=f"{who}: counting at {sz.fmt(held)} (held back: checks the fit)", progress=0,
             total=1)
        counter, _ = _count(task, held, dtype, device, seed)
        got, want = _quantities(counter.totals()), predict(base_q, base, exps, held)
        err = {n: abs(want[n] - got[n]) / got[n] for n in got if got[n] > 0 and n in want}
        out["held_back"] = {"sizes": held, "relative_error": err, "max_relative_error": max(err.values(), default=0.0)}
    out["at_full"] = predict(base_q, base, exps, full)
    return out


def _fit_shape(task: Task, base: tuple[int, ...], full: tuple[int, ...], base_q: dict[str, float],
               dtype: torch.dtype, device: str, seed: int, emit: Any, who: str, block: int | None = None) \
        -> dict[str, Any] | None:
    """_fit for a function-form reference: its bench shape's dimensions (dim0, dim1, ...) are the sizes, each
    doubled alone from the count point, then every fitted one about x1.5 for the held-back run. None when there are
    too many to fit; a doubled shape the reference refuses raises (the ratio rule stands)."""
    named = {f"dim{i}": v for i, v in enumerate(base)}
    at_full = {f"dim{i}": v for i, v in enumerate(full)}
    keys = [k for k in named if named[k] != at_full[k]]
    if not keys or len(keys) > FIT_MAX_SIZES:
        return None

    def count(sizes: dict[str, int], why: str) -> dict[str, float]:
        shape = tuple(sizes[f"dim{i}"] for i in range(len(base)))
        emit("progress", message=f"{who}: counting at {list(shape)} ({why})", progress=0, total=1)
        return _quantities(_count(task, shape, dtype, device, seed)[0].totals())

    runs = {k: ({**named, k: 2 * named[k]}, {}) for k in keys}
    runs = {k: (sizes, count(sizes, f"fit: {k} doubled")) for k, (sizes, _) in runs.items()}
    exps = fit_counts(base_q, named, runs)
    held = dict(named)
    for k in keys:  # aligned to the blocks as the bench shape is: padding the full size never has is no fit error
        align = min(block or 1, at_full[k] & -at_full[k]) if at_full[k] > 0 else 1
        held[k] = max(named[k] + align, round(named[k] * HELD_BACK / align) * align)
    out: dict[str, Any] = {"sizes": keys, "exponents": exps, "count_point": named, "estimated_for": at_full}
    try:
        got, want = count(held, "held back: checks the fit"), predict(base_q, named, exps, held)
        err = {n: abs(want[n] - got[n]) / got[n] for n in got if got[n] > 0 and n in want}
        out["held_back"] = {"sizes": held, "relative_error": err, "max_relative_error": max(err.values(), default=0.0)}
    except Exception as e:  # noqa: BLE001 - a held-back shape the reference refuses: the fit stands, unchecked
        out["held_back_note"] = f"no held-back run: {type(e).__name__}: {str(e)[:120]}"
    out["at_full"] = predict(base_q, named, exps, at_full)
    return out


def estimate_candidate(args: dict[str, Any], rt: Any, emit: Any, patches: Any) -> dict[str, Any]:
    """Count one candidate's traffic and tl.dot FLOPs under the interpreter and scale them to full size."""
    if not rt.interpreter:
        return {"error_usage": "the roofline estimate counts under Triton's CPU interpreter; on a GPU, call "
                               "run_benchmark for measured times"}
    task = load_task(Path(args["reference"]), Path(args["candidate"]), args.get("reference_entry"),
                     args.get("candidate_entry"), rt.device)
    plan = _plan_kernelbench if task.kernelbench else _plan_form_a
    measured, full, dtype, where = plan(task, args, rt.device)
    out: dict[str, Any] = {"candidate": args["candidate_display"], "measured_at": where, "dtype": str(dtype)[6:],
                           "measured_sizes": measured, "full_sizes": full, "scale_rule": RULE}
    emit("progress", message=f"{out['candidate']}: counting loads, stores and tl.dot at {where}", progress=0, total=1)
    from ..device.runtime import RECORDER

    RECORDER.record_launches(True)  # the specialisations, compiled for the GPU below (resources)
    try:
        counter, block = _count(task, measured, dtype, rt.device, int(args.get("seed", 0)))
        # Only tl.dot work is padded (masked loads and stores count their live lanes): re-count a dot kernel only.
        dots = any(counter.totals()["dot_flops"].values())
        grown = _past_the_blocks(task, measured, full, block) if task.kernelbench and measured != full and dots \
            else None
        if grown is not None:
            emit("progress", message=f"{out['candidate']}: counting again at {sz.fmt(grown)} (past its {block}-wide "
                 "blocks)", progress=0, total=1)
            counter, _ = _count(task, grown, dtype, rt.device, int(args.get("seed", 0)))
            out["measured_note"] = (f"counted at {sz.fmt(grown)} instead of {sz.fmt(measured)}: there some sizes "
                                    f"were inside one of the candidate's {block}-wide blocks, whose padding the "
                                    "scaling to full size would multiply")
            measured = grown
            out.update(measured_sizes=measured, measured_at=f"{where}, grown past the candidate's blocks")
    except Exception as e:  # noqa: BLE001 - the candidate's failure is data, as in run_validation
        out.update(ok=False, error=f"{type(e).__name__}: {str(e)[:500]}")
        return out
    out["resources"] = _resources(args, rt)
    totals = counter.totals()
    try:
        if task.kernelbench:
            (m_bytes, m_flops), (f_bytes, f_flops) = _kb_work(task, measured), _kb_work(task, full)
        else:
            (m_bytes, m_flops) = _form_a_work(task, measured, dtype, rt.device)
            (f_bytes, f_flops) = _form_a_work(task, full, dtype, rt.device)
    except Exception as e:  # noqa: BLE001 - the reference does not run on fake tensors: no scaling rule applies
        if measured == full:  # counted at full size: nothing to scale (the reference's bytes stay unknown)
            m_bytes = m_flops = f_bytes = f_flops = 0.0
        else:
            out.update(ok=False, counted=totals, error=f"counted at {measured}, but the reference does not run on "
                       f"fake tensors to scale to {full} ({type(e).__name__}: {str(e)[:200]}); pass sizes=... "
                       "small enough to count at directly")
            return out
    declared = _declared_full(task, args, full, dtype, rt.device)
    r_bytes = f_bytes / m_bytes if m_bytes else 1.0
    r_flops = f_flops / m_flops if m_flops and f_flops else r_bytes

    def scale(v: float | None, r: float) -> float | None:
        return None if v is None else float(v) * r

    loads = sum(la.load_bytes * (r_flops if la.dot_flops else r_bytes) for la in counter.launches)
    by_ratio = {"load_bytes": float(loads), "store_bytes": scale(totals["store_bytes"], r_bytes),
                "unique_bytes": scale(totals["unique_bytes"], r_bytes),
                "dot_flops": {k: v * r_flops for k, v in totals["dot_flops"].items()}}
    out.update(ok=True, counted=totals, launches=[la.as_dict() for la in counter.launches[:32]],
               scale={"bytes": r_bytes, "flops": r_flops}, scaled=by_ratio, estimated_for=full,
               reference_full={"bytes": f_bytes, "flops": f_flops, **declared})
    if measured != full and (task.kernelbench or isinstance(full, (tuple, list))):
        fitter = _fit if task.kernelbench else _fit_shape
        try:
            fit = fitter(task, measured, full, _quantities(totals), dtype, rt.device, int(args.get("seed", 0)), emit,
                         out["candidate"], block)
        except Exception as e:  # noqa: BLE001 - a count that fails at another size: the ratio rule stands
            fit = None
            out["fit_note"] = f"no fit: counting at another size raised {type(e).__name__}: {str(e)[:160]}"
        if fit is not None:
            at = fit.pop("at_full")
            out.update(fit=fit, scale_rule=FIT_RULE, scaled_by_reference_ratio=by_ratio,
                       scaled={"load_bytes": at.get("load_bytes", 0.0), "store_bytes": at.get("store_bytes"),
                               "unique_bytes": at.get("unique_bytes"),
                               "dot_flops": {k.split(":", 1)[1]: v for k, v in at.items()
                                             if k.startswith("dot_flops:")}})
        elif "fit_note" not in out:
            out["fit_note"] = (f"no fit (more than {FIT_MAX_SIZES} sizes to fit, or a size that cannot move "
                               "alone): scaled by the reference's ratio")
    return out


def _declared_full(task: Task, args: dict[str, Any], full: Any, dtype: torch.dtype, device: str) -> dict[str, Any]:
    """The task sidecar's [bench] bytes/flops at full size (evaluated on fake inputs), which replace the counted
    compulsory bytes and FlopCounterMode FLOPs in the 'x reference' column: the bytes the op must read (ignored rows
    unread) and the FLOPs it must do (a causal mask's half)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    from .formulas import install

    if not (args.get("bytes_expr") or args.get("flops_expr")):
        return {}
    install(task.ref_mod, args)
    out: dict[str, Any] = {}
    case = Case("estimate", full, dtype, device, 0, 1.0)
    with sz.sized(task.ref_mod, full) if task.kernelbench else contextlib.nullcontext(), \
            FakeTensorMode(allow_non_fake_inputs=True):
        inputs = list(task.ref_mod.get_inputs()) if task.kernelbench else list(task.make_inputs(case))
        for key, attr in (("bytes", "BYTES"), ("flops", "FLOPS")):
            fn = getattr(task.ref_mod, attr, None)
            if callable(fn) and args.get(f"{key}_expr"):
                out[key] = float(fn(case, inputs))
                out[f"{key}_source"] = "declared ([bench] of the task sidecar)"
    return out

