"""A roofline ESTIMATE of one candidate without a GPU, from its launch list at the problem's full size (issue 46).

1. The dry run (validation/dry_run.py) runs the reference and the candidate once at the size run_benchmark would
   time, on fake tensors: every Triton launch (kernel, grid, constexprs, argument layouts) and every torch op the
   candidate calls beside them (cuBLAS, cuDNN, elementwise torch ops: FLOPs by torch's own formulas, bytes of their
   tensors) are recorded; nothing is allocated and no kernel runs.
2. Per launch, a few of its programs run under the interpreter at the same constexprs, in stand-in memory
   (device/interp_sample.py: the first, middle, next-to-last and last program per grid axis); their counts (bytes
   loaded and stored, load/store operations, tl.dot FLOPs by precision, elementwise and special-function work)
   weighted over the grid give the launch's totals. No power law, no count point: the counts are the full size's.
   An @autotune kernel is counted at each config the GPU would try (their list from the compile child, which
   imports the module as a GPU would); the server keeps the fastest, as the autotuner does.
3. The launches are compiled for the estimate's GPU (target_compile.py; registers, occupancy, shared memory).

The server (roofline_estimate.py) turns the rows into times for a GPU. Method and error are stated in the answer:
the counts are exact where every program of a launch ran, else their spread between sampled programs bounds them.
A wrapper that reads values on the host cannot run on fake tensors: the estimate then counts one interpreted call at
the validated (shrunk) size, sizes as validation takes them (the sidecar's [sizes.interpreter] included), and
scales it by the reference's bytes and FLOPs ratio, labelled as such.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import torch

from ... import gpu_targets
from ..device import dry_launch, interp_sample, interp_traffic, target_compile
from ..device.dry_launch import DryLaunch
from ..validation import cases as cs
from ..validation import dry_run
from ..validation import kernelbench as kbench
from ..validation import sizes as sz
from ..validation.loader import load_task
from ..validation.tasks import Case, Task, TaskError, dtype_from_name

MAX_PROGRAMS = 16  # programs of the launched config (a 64-tile matmul's 16 take ~2 s under the interpreter here)
MAX_PROGRAMS_ALT = 6  # per other autotune config: their interior programs are alike, the edges are what differs
MAX_ALT_CONFIGS = 12
# The fallback's count point (a wrapper that reads values): a function-form shape halved to at most this many
# elements of inputs + outputs and reference FLOPs (the interpreter runs ~1e6 elements of a vector add per second).
HALVE_MAX_ELEMS = 1 << 18
MEASURE_MAX_FLOPS = 1 << 25
METHOD = ("dry run at the problem's size on fake tensors (every launch's grid and constexprs, every torch op); per "
          "launch a few programs run under the interpreter at those constexprs, their counts weighted over the full "
          "grid; torch ops costed from torch's FLOP formulas and their tensors' bytes")
FALLBACK = ("one interpreted call at the validated (shrunk) size, scaled by the reference's bytes and FLOPs at full "
            "size over those at that size")


def plan_sizes(task: Task, args: dict[str, Any]) -> tuple[Any, str, torch.dtype]:
    """(what run_benchmark would time, what those sizes are, dtype). sizes= and the sidecar's [sizes] set the size
    for a GPU too (run_benchmark times there); [sizes.interpreter] never does (it is where validation counts)."""
    from .specs import bench_cases

    if task.kernelbench:
        at = kbench.bench_specs(task, {k: args.get(k) for k in ("sizes", "cases", "sweep")})[0][1]
        label = (f"your sizes ({sz.fmt(args['sizes'])}) on top of the problem's" if args.get("sizes") else
                 "the problem's own sizes")
        dtype = dtype_from_name(args["dtype"]) if args.get("dtype") else kbench.native_dtype(task, at)
        return at, label, dtype
    name, at, _ = bench_cases(task, {k: args.get(k) for k in ("cases", "sweep")})[0]
    names = [args["dtype"]] if args.get("dtype") else list(getattr(task.ref_mod, "DTYPES", None) or ["float32"])
    label = f"the benchmark's case {name}" + ("" if args.get("cases") or args.get("sweep") else " (BENCH_SHAPES)")
    return at, label, dtype_from_name(names[0])


def _unique_bytes(launch: DryLaunch, touched: set[int]) -> float:
    """The least bytes the launch can move: each storage it touched once, at most the views it was given of it."""
    per: dict[int, tuple[int, int]] = {}
    for t in launch.tensors().values():
        if touched and t.storage not in touched:
            continue
        have, cap = per.get(t.storage, (0, t.storage_bytes))
        per[t.storage] = (have + t.extent_bytes(), cap)
    return float(sum(min(have, cap) for have, cap in per.values()))


def _counted(launch: DryLaunch, s: interp_sample.Sample) -> dict[str, Any]:
    total = s.total
    requested = total.load_bytes + total.store_bytes
    return {"grid": list(s.grid), "programs": s.grid[0] * s.grid[1] * s.grid[2], "sampled": len(s.programs),
            "planned": s.planned, "spread": round(s.spread(), 4), "seconds": round(s.seconds, 2),
            "sample_error": None if s.error is None else round(s.error, 4), "persistent_tiles": s.persistent_tiles,
            "counts": total.as_dict(), "unique_bytes": min(requested, _unique_bytes(launch, s.touched)),
            "notes": s.notes, "finding": s.finding}


def _configs(section: dict[str, Any] | None, launch: DryLaunch) -> list[dict[str, Any]]:
    """The compile rows of this launch's kernel: one per config the GPU would try (meta-parameters, options,
    registers, shared memory, occupancy where compiled)."""
    if not section or section.get("error"):
        return []
    return [r for r in section.get("rows") or [] if r.get("spec_key") == launch.spec.short_key()]


def _launch_row(launch: DryLaunch, section: dict[str, Any] | None, emit: Any, who: str) -> dict[str, Any]:
    """One launch's counts at its own config and at each other config an autotuner would try on the GPU."""
    emit("progress", message=f"{who}: {launch.describe()}: running a few programs", progress=0, total=1)
    s = interp_sample.run_programs(launch, MAX_PROGRAMS)
    launched = {p["name"]: p.get("value") for p in launch.spec.params if p["type"] == "constexpr"}
    row: dict[str, Any] = {"kernel": launch.name, "line": launch.line, "repeats": launch.repeats,
                           "autotuned": launch.autotuned, "options": dict(launch.options),
                           "meta": {k: v for k, v in launched.items() if isinstance(v, (int, bool, str))},
                           **_counted(launch, s)}
    rows = _configs(section, launch)
    mine = next((r for r in rows if all(launched.get(k) == v for k, v in (r.get("meta") or {}).items())
                 and all(launch.options.get(k, r.get(k)) == r.get(k) for k in ("num_warps", "num_stages")
                         if k in launch.options)), None)
    if mine is not None:
        row["compiled"] = _facts(mine)
    alts = []
    if launch.autotuned and s.finding is None:
        counted = {_meta_key(row["meta"]): _counted(launch, s)}
        for r in rows:
            if r is mine or not r.get("ok"):
                continue
            meta = {k: v for k, v in (r.get("meta") or {}).items() if k in launched}
            key = _meta_key({**row["meta"], **meta})
            if key not in counted:
                if len(counted) > MAX_ALT_CONFIGS:
                    continue
                try:
                    grid = dry_launch.grid_at(launch, {**launched, **meta})
                    alt = interp_sample.run_programs(launch, MAX_PROGRAMS_ALT, meta=meta, grid=grid)
                except Exception as e:  # noqa: BLE001 - a config the interpreter cannot run here: left out, named
                    row["notes"].append(f"config {r.get('config')}: not counted ({type(e).__name__}: "
                                        f"{str(e)[:120]})")
                    counted[key] = None
                    continue
                counted[key] = _counted(launch, alt) if alt.finding is None else None
            if counted[key] is not None:
                alts.append({"config": r.get("config"), "meta": meta, "compiled": _facts(r), **counted[key],
                             "options": {k: r[k] for k in ("num_warps", "num_stages") if r.get(k) is not None}})
    row["alternatives"] = alts
    return row


def _meta_key(meta: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted((k, repr(v)) for k, v in meta.items()))


def _facts(r: dict[str, Any]) -> dict[str, Any]:
    return {k: r.get(k) for k in ("config", "num_warps", "num_stages", "n_regs", "n_spills", "shared", "occupancy",
                                  "limited_by", "level") if r.get(k) is not None}


def _resources(args: dict[str, Any], rt: Any, specs: list[Any]) -> dict[str, Any] | None:
    """The full-size launches compiled for the estimate's GPU (its compute capability; sm_90 unless named): per
    kernel and config, registers, spills, shared memory and occupancy (every config to a cubin, read from the cache
    a validation of the same source left), and the findings they make. args["compile_budget"] == "must" compiles
    only the launched config and the two likeliest to overflow to a cubin (the rest pass Triton's frontend, which
    still names their meta-parameters for the count)."""
    if not specs:
        return None
    try:
        targets = target_compile.parse_targets(args.get("target_gpus") or args.get("gpu"))
    except ValueError:  # a GPU name the compile does not know (the roofline may still): the default target
        targets = target_compile.parse_targets(None)
    if not targets or str(args.get("target_gpus") or os.environ.get("P2T_TARGET_GPUS", "")).lower() in \
            gpu_targets.OFF:  # "none": no compile (the estimate then has no autotune configs but the launched one)
        return None
    share = 0.0 if args.get("compile_budget") == "must" else None  # "must": the launched and likeliest-to-overflow
    section = target_compile.compile_now(target_compile.TargetCompiler(targets[:1], rt.triton_version, share=share),
                                         specs, [])
    if "error" not in section:
        section["findings"] = [{k: f[k] for k in ("check", "severity", "message", "fix")}
                               for f in target_compile.judge(section)]
    return section


def estimate_candidate(args: dict[str, Any], rt: Any, emit: Any, patches: Any) -> dict[str, Any]:
    """The candidate's launches at full size, counted per program and weighted over their grids; its torch ops."""
    if not rt.interpreter:
        return {"error_usage": "the roofline estimate counts under Triton's CPU interpreter; on a GPU, call "
                               "run_benchmark for measured times"}
    task = load_task(Path(args["reference"]), Path(args["candidate"]), args.get("reference_entry"),
                     args.get("candidate_entry"), rt.device)
    at, label, dtype = plan_sizes(task, args)
    who = args["candidate_display"]
    out: dict[str, Any] = {"candidate": who, "estimated_for": at, "full_sizes": at, "sizes_label": label,
                           "dtype": str(dtype)[6:], "method": METHOD}
    if task.kernelbench and args.get("sizes_interpreter"):
        out["sizes_interpreter"] = args["sizes_interpreter"]
    emit("progress", message=f"{who}: dry run at {sz.fmt(at) if isinstance(at, dict) else list(at)}", progress=0,
         total=1)
    dry = dry_run.run(task, at, dtype, rt.device, label, cast=bool(args.get("dtype")))
    declared = _declared_full(task, args, at, dtype, rt.device)
    out["reference_full"] = {"bytes": dry.ref_bytes, "flops": dry.ref_flops,
                             "ops": [o.as_dict() for o in dry.ref_ops], **declared}
    out["notes"] = list(dry.notes)
    if not dry.ok:
        return _fallback(task, args, rt, emit, out, dry, dtype)
    out["resources"] = _resources(args, rt, [la.spec for la in dry.launches])
    out["launches"] = [_launch_row(la, out["resources"], emit, who) for la in dry.launches]
    out["library"] = [o.as_dict() for o in dry.ops]
    out["total_launches"] = dry.total_launches
    found = [la["finding"] for la in out["launches"] if la.get("finding")]
    found += [{"check": "target_resources", "message": f"{la.name}: {w}"} for la in dry.launches
              for w in dry_launch.grid_findings(la)]
    out["full_size_findings"] = found
    out["scaled"] = totals(out["launches"], out["library"])
    out["ok"] = True
    return out


def totals(launches: list[dict[str, Any]], library: list[dict[str, Any]]) -> dict[str, Any]:
    """Bytes and FLOPs of the whole call at full size, each launch at its own config, repeats included."""
    load = store = uniq = ew = 0.0
    dots: dict[str, float] = {}
    for la in launches:
        n, c = la.get("repeats", 1), la["counts"]
        load += n * c["load_bytes"]
        store += n * c["store_bytes"]
        uniq += n * (la.get("unique_bytes") or 0.0)
        ew += n * c.get("ew_flops", 0.0)
        for k, v in c["dot_flops"].items():
            dots[k] = dots.get(k, 0.0) + n * v
    lib_bytes = sum(o["bytes"] * o.get("repeats", 1) for o in library)
    lib_flops = sum(o["flops"] * o.get("repeats", 1) for o in library)
    return {"load_bytes": load, "store_bytes": store, "unique_bytes": uniq, "dot_flops": dots, "ew_flops": ew,
            "library_bytes": lib_bytes, "library_flops": lib_flops}


# ---- the fallback: a wrapper that needs values ----------------------------------------------------------------
HALVE_FLOOR = 256  # no dimension is halved below this (or its full size) while another can shrink: 2 x a 128 tile


def halved_shape(full: tuple[int, ...], fits: Any) -> tuple[int, ...] | None:
    """The bench shape with dimensions halved until `fits(shape)`: the largest above HALVE_FLOOR first (the leading
    one on a tie), then the outermost leading one (batch, heads), the last one only when nothing else can shrink.
    Counting at the bench shape's own proportions keeps the candidate on the code path it takes at full size (softmax
    stage 3 counted at 3 x 20000 took its two-pass long-row path). A halving the reference refuses (fits raises) is
    undone and that dimension frozen; None when nothing fits."""
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


def _count_point(task: Task, args: dict[str, Any], at: Any, dtype: torch.dtype, device: str) -> tuple[Any, str]:
    """Where the fallback counts: the validated size (KernelBench: the main case with the sidecar's
    [sizes.interpreter]); a function-form bench shape halved to fit the interpreter."""
    if task.kernelbench:
        pins = {**(args.get("sizes_interpreter") or {}), **(args.get("sizes") or {})}
        main = cs.plan(task.ref_mod, device, pins, None).main.sizes
        src = "[sizes.interpreter] of the sidecar" if args.get("sizes_interpreter") else "the validation's shrink"
        return main, f"the validated (shrunk) size ({src})"

    def fits(shape: tuple[int, ...]) -> bool:
        d = dry_run.run(task, shape, dtype, device, "count point")
        elems = (d.ref_bytes or 0.0) / max(1, torch.empty((), dtype=dtype).element_size())
        return d.ref_error is None and elems <= HALVE_MAX_ELEMS and (d.ref_flops or 0.0) <= MEASURE_MAX_FLOPS

    small = halved_shape(tuple(at), fits) if isinstance(at, (tuple, list)) and all(isinstance(d, int) for d in at) \
        else None
    if small is None:
        raise TaskError("inputs", "no shape small enough to count under the interpreter: pass cases=[...] with a "
                        "smaller shape", usage=True)
    return small, "the benchmark's shape halved to fit the interpreter"


def _fallback(task: Task, args: dict[str, Any], rt: Any, emit: Any, out: dict[str, Any], dry: dry_run.DryRun,
              dtype: torch.dtype) -> dict[str, Any]:
    """Count one interpreted call at the validated size and scale it by the reference's ratio (labelled)."""
    out.update(method=FALLBACK, fallback=dry.fallback)
    try:
        point, where = _count_point(task, args, out["estimated_for"], dtype, rt.device)
        emit("progress", message=f"{out['candidate']}: counting at {where}", progress=0, total=1)
        case = Case("estimate", point, dtype, rt.device, int(args.get("seed", 0)), 1.0)
        if task.kernelbench:
            task.prepare(case)
        inputs = task.make_inputs(case)
        with interp_traffic.counting() as counter:
            task.cand_fn(*inputs)
        small = dry_run.run(task, point, dtype, rt.device, where, cast=bool(args.get("dtype")))
    except Exception as e:  # noqa: BLE001 - the candidate's failure is data, as in run_validation
        out.update(ok=False, error=f"{type(e).__name__}: {str(e)[:500]}")
        return out
    full = out["reference_full"]
    r_bytes = (full["bytes"] / small.ref_bytes) if full.get("bytes") and small.ref_bytes else 1.0
    r_flops = (full["flops"] / small.ref_flops) if full.get("flops") and small.ref_flops else r_bytes
    t = counter.totals()
    loads = sum(la.load_bytes * (r_flops if la.dot_flops else r_bytes) for la in counter.launches)
    out.update(ok=True, counted_at=point, measured_at=where, counted=t,
               scale={"bytes": r_bytes, "flops": r_flops}, launches=[], library=[],
               scaled={"load_bytes": float(loads), "store_bytes": t["store_bytes"] * r_bytes,
                       "unique_bytes": None if t["unique_bytes"] is None else t["unique_bytes"] * r_bytes,
                       "dot_flops": {k: v * r_flops for k, v in t["dot_flops"].items()}, "ew_flops": 0.0,
                       "library_bytes": 0.0, "library_flops": 0.0})
    out["notes"].append(f"no dry run at full size ({dry.fallback}): counted at {where} "
                        f"{sz.fmt(point) if isinstance(point, dict) else list(point)} and scaled by the reference's "
                        f"ratio (bytes x{r_bytes:.4g}, FLOPs x{r_flops:.4g}); torch ops beside the kernels not costed")
    return out


def _declared_full(task: Task, args: dict[str, Any], full: Any, dtype: torch.dtype, device: str) -> dict[str, Any]:
    """The task sidecar's [bench] bytes/flops at full size (evaluated on fake inputs), which stand for the
    reference's work: the bytes the op must read (ignored rows unread) and the FLOPs it must do (a causal half)."""
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
                out[f"declared_{key}"] = float(fn(case, inputs))
                out[f"{key}_source"] = "declared ([bench] of the task sidecar)"
    return out
