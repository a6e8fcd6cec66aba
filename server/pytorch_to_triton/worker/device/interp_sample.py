"""A few programs of a full-size launch, run by Triton's interpreter in stand-in memory (issue 46).

The dry run (dry_launch.py) records a launch at the problem's full size without data. Here some of its programs run
under the interpreter with every tensor argument at a stand-in address (dry_launch.StandIn: one 16 TiB region per
storage, so nothing is allocated and a 9 GB problem costs what a 9 kB one does): loads return zeros (`other` where
masked off), stores and atomics write nothing. Per program we count what interp_traffic.py counts (bytes loaded and
stored by live lanes, tl.dot FLOPs by precision) plus load/store operations and elementwise float work (add, mul,
fma = 2, ...) and special-function calls (exp, log, sqrt, ...), and we check every live lane's address:

- inside its tensor's storage: fine;
- below or past it by a whole number of 2^32 elements, or computed from int32 arithmetic that overflowed (an int64
  shadow of each overflowed int32 value follows it through the ops to the pointer): the int32 offset overflow the
  GPU would make at this size (the kernel reads or writes the wrong place), named with the kernel line where the
  int32 value first overflowed;
- anywhere else: an access outside every argument (reported as a note: the stand-in memory holds zeros where the
  kernel may expect indices).

Loops are sampled too: a `range`/`tl.range` loop of more than three trips runs its first two and its last, and the
second stands for the ones skipped (the first may set up, the last is the masked tail). Nested loops compose, so a
persistent kernel's tile loop around a K loop costs nine iterations, not num_tiles x K / BLOCK_K.

Which programs: a lattice over the grid (per axis the first, middle and next-to-last programs stand for all but the
last, which stands for itself: exact for work that grows linearly with the program id, as causal attention's does;
a partial last tile counted once). The per-program counts, weighted, give the launch's totals at full size.
`max_programs=1` runs the last program only (every axis at its largest id: the largest offsets), what a validation
needs for the int32 check.
"""

from __future__ import annotations

import inspect
import itertools
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import interp_traffic
from .dry_launch import STORAGE_SPACING, DryLaunch, stand_in

EXACT = "_p2t_exact"  # int64 values of an int32 handle whose arithmetic overflowed
WRAPPED = "_p2t_wrapped"  # bool per lane: this pointer was offset by an overflowed int32 value
NARROW = "_p2t_narrow"  # an fp32 handle cast from bf16/fp16 (a tl.dot on it runs at the narrow type on the GPU)
I32_MIN, I32_MAX = -(2**31), 2**31 - 1
SAMPLE_BUDGET_S = 20.0  # per launch: past it the programs run so far stand for all (say so)
EW_OPS = {"create_fadd": 1, "create_fsub": 1, "create_fmul": 1, "create_fdiv": 1, "create_fma": 2,
          "create_precise_divf": 1, "create_approx_divf": 1, "create_maximumf": 1, "create_minimumf": 1,
          "create_maxnumf": 1, "create_minnumf": 1}
SFU_OPS = ("create_exp", "create_exp2", "create_log", "create_log2", "create_sqrt", "create_precise_sqrt",
           "create_rsqrt", "create_sin", "create_cos", "create_erf", "create_tanh")
SHAPE_OPS = ("create_splat", "create_broadcast", "create_expand_dims", "create_reshape", "create_trans",
             "create_int_cast", "ternary_op", "create_cat", "create_join", "create_permute")


@dataclass
class Counts:
    """What programs did: bytes, memory operations, tl.dot FLOPs by precision, elementwise and SFU work."""

    load_bytes: float = 0.0
    store_bytes: float = 0.0
    loads: float = 0.0
    stores: float = 0.0
    dot_flops: dict[str, float] = field(default_factory=dict)
    ew_flops: float = 0.0
    sfu_ops: float = 0.0
    dot_tile: tuple[int, int, int] = (0, 0, 0)  # the widest tl.dot (M, N, K) seen: tensor-core efficiency
    # Bytes each program moves that it did not move before (its rereads of its own data left out): a two-pass
    # softmax row counts once here, twice in load_bytes. From the addresses of the iterations that ran.
    program_unique_bytes: float = 0.0

    def add(self, other: Counts, weight: float = 1.0) -> None:
        """self += weight * other."""
        self.dot_tile = max(self.dot_tile, other.dot_tile, key=lambda t: (t[0] * t[1], t[2]))
        self.load_bytes += weight * other.load_bytes
        self.store_bytes += weight * other.store_bytes
        self.loads += weight * other.loads
        self.stores += weight * other.stores
        self.ew_flops += weight * other.ew_flops
        self.sfu_ops += weight * other.sfu_ops
        self.program_unique_bytes += weight * other.program_unique_bytes
        for k, v in other.dot_flops.items():
            self.dot_flops[k] = self.dot_flops.get(k, 0.0) + weight * v

    def scaled(self, factor: float) -> Counts:
        """A copy times factor."""
        out = Counts()
        out.add(self, factor)
        return out

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"load_bytes": self.load_bytes, "store_bytes": self.store_bytes, "loads": self.loads,
                "stores": self.stores, "dot_flops": dict(self.dot_flops), "ew_flops": self.ew_flops,
                "sfu_ops": self.sfu_ops, "dot_tile": list(self.dot_tile),
                "program_unique_bytes": self.program_unique_bytes}


@dataclass
class Sample:
    """Programs of one launch run and their counts, extrapolated to the whole grid."""

    launch: str
    grid: tuple[int, int, int]
    programs: list[tuple[int, int, int]] = field(default_factory=list)  # the programs that ran
    total: Counts = field(default_factory=Counts)  # at full size (the weighted programs)
    per_program: list[float] = field(default_factory=list)  # bytes moved by each program run
    touched: set[int] = field(default_factory=set)  # storages loaded or stored
    seconds: float = 0.0
    finding: dict[str, Any] | None = None  # an int32 offset overflow at this size
    notes: list[str] = field(default_factory=list)
    planned: int = 0
    error: float | None = None  # the sampling's relative error (bytes and tl.dot FLOPs), None when not all ran
    persistent_tiles: int | None = None  # a persistent kernel's tiles (its programs loop over them, grid-strided)

    def spread(self) -> float:
        """Largest relative difference between the bytes of two sampled programs (0: all alike)."""
        vals = [v for v in self.per_program if v > 0]
        return (max(vals) / min(vals) - 1.0) if len(vals) > 1 else 0.0


class _Stop(Exception):
    """Ends a sampled launch: a finding, or the time budget."""


def lattice(grid: tuple[int, int, int], max_programs: int) -> list[tuple[tuple[int, int, int], float, float]]:
    """(program, weight, coarse weight) triples whose weights sum to the grid's programs, the last program first.
    The coarse weights let the middle program alone stand for the interior: where the two sums differ, the work is
    not linear in the program id and the difference is the sampling's error."""
    levels = [3 if n > 1 else 1 for n in grid]

    def axis(n: int, level: int) -> list[tuple[int, float, float]]:
        if n <= 1:
            return [(0, 1.0, 1.0)]
        if level >= 3 and n <= 4:
            return [(i, 1.0, 1.0) for i in range(n)]
        if level >= 3:
            inner = sorted({0, (n - 2) // 2, n - 2})
            return [(i, (n - 1) / len(inner), float(n - 1) if i == (n - 2) // 2 else 0.0) for i in inner] + \
                [(n - 1, 1.0, 1.0)]
        if level == 2:
            return [((n - 2) // 2, float(n - 1), float(n - 1)), (n - 1, 1.0, 1.0)] if n > 2 else \
                [(0, 1.0, 1.0), (1, 1.0, 1.0)]
        return [(n - 1, float(n), float(n))]

    def size() -> int:
        return int(np.prod([len(axis(n, lv)) for n, lv in zip(grid, levels)]))

    while size() > max(1, max_programs):
        cand = [i for i in range(3) if levels[i] > 1]
        if not cand:
            break
        i = max(cand, key=lambda j: (len(axis(grid[j], levels[j])), j))
        levels[i] -= 1
    axes = [axis(n, lv) for n, lv in zip(grid, levels)]
    out = [((x, y, z), wx * wy * wz, cx * cy * cz) for (x, wx, cx), (y, wy, cy), (z, wz, cz)
           in itertools.product(*axes)]
    last = tuple(n - 1 for n in grid)
    out.sort(key=lambda pw: pw[0] != last)
    return out


def _kernel_line(file: str) -> int | None:
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_code.co_filename == file and frame.f_code.co_name != "<module>":
            return frame.f_lineno
        frame = frame.f_back
    return None


class _Run:
    """The patches of one sampled launch: stand-in memory, counts, the int32 shadows."""

    def __init__(self, launch: DryLaunch):
        self.launch = launch
        self.cur = Counts()
        self.regions: dict[int, int] = {}  # storage index -> bytes
        for t in launch.tensors().values():
            self.regions[t.storage] = t.storage_bytes
        for v in launch.args.values():
            if isinstance(v, dict) and "descriptor" in v:
                self.regions[v["descriptor"].storage] = v["descriptor"].storage_bytes
        self.touched: set[int] = set()
        self.overflow_line: int | None = None
        self.finding: dict[str, Any] | None = None
        self.outside: str | None = None
        self.program: tuple[int, int, int] = (0, 0, 0)
        self.deadline = float("inf")
        self.loops = 0  # loops whose middle iterations were extrapolated
        self.persistent_tiles: int | None = None  # a loop over tiles strided by the grid: their number
        self.addrs: dict[int, list[np.ndarray]] = {}  # element size -> addresses the program now running touched
        self.n_addrs = 0
        self.executed = 0.0  # bytes its executed accesses moved (before any loop extrapolation)

    # ---- addresses ---------------------------------------------------------------------------------------------
    def check(self, ptrs: Any, mask: Any, size: int, what: str) -> np.ndarray:
        """The live lanes' addresses; raises _Stop on an int32 overflow."""
        p = np.asarray(ptrs.data)
        m = np.broadcast_to(np.asarray(mask.data, dtype=bool), p.shape) if mask is not None else \
            np.ones(p.shape, dtype=bool)
        wrapped = getattr(ptrs, WRAPPED, None)
        if wrapped is not None and np.any(np.broadcast_to(wrapped, p.shape) & m):
            self.stop_overflow(what, "an offset computed in int32 arithmetic that overflowed")
        lanes = p[m].astype(np.uint64, copy=False)
        if lanes.size == 0:
            return lanes
        region = np.rint(lanes.astype(np.float64) / STORAGE_SPACING).astype(np.int64) - 1
        off = lanes.astype(np.int64) - (region + 1) * STORAGE_SPACING
        known = np.array([self.regions.get(int(r), -1) for r in np.unique(region)])
        lookup = dict(zip(np.unique(region).tolist(), known.tolist()))
        nbytes = np.vectorize(lambda r: lookup.get(r, -1), otypes=[np.int64])(region) if len(lookup) > 1 else \
            np.full(region.shape, next(iter(lookup.values())), dtype=np.int64)
        bad = (nbytes < 0) | (off < 0) | (off + size > nbytes)
        self.touched.update(int(r) for r in np.unique(region[~bad]))
        self.executed += lanes.size * size
        if self.n_addrs <= interp_traffic.UNIQUE_CAP:
            self.n_addrs += lanes.size
            self.addrs.setdefault(size, []).append(lanes)
        if bad.any():
            i = int(np.argmax(bad))
            r, o, n = int(region[i]), int(off[i]), int(nbytes[i])
            if n > 0 and any(0 <= o // size + k * 2**32 < n // size for k in range(1, 9)):
                self.stop_overflow(what, f"an element offset {o // size:,} that is {o // size + 2**32:,} wrapped "
                                   "into int32")
            if self.outside is None:
                self.outside = (f"{what} at an address outside every tensor argument (storage {r}, byte offset "
                                f"{o:,} of {n:,}) in program {self.program}")
        return lanes

    def end_program(self) -> None:
        """The program now running is done: its own-data rereads out of its bytes (program_unique_bytes)."""
        c = self.cur
        moved = c.load_bytes + c.store_bytes
        if self.executed > 0 and self.n_addrs <= interp_traffic.UNIQUE_CAP:
            distinct = sum(np.unique(np.concatenate(parts)).size * size for size, parts in self.addrs.items())
            c.program_unique_bytes = moved * min(1.0, distinct / self.executed)
        else:
            c.program_unique_bytes = moved
        self.addrs, self.n_addrs, self.executed = {}, 0, 0.0

    def stop_overflow(self, what: str, why: str) -> None:
        line = self.overflow_line
        self.finding = {"check": "int32_offset_overflow", "kernel": self.launch.name, "program": self.program,
                        "line": line, "grid": list(self.launch.grid),
                        "message": f"{self.launch.name}: at the problem's full size, program {self.program} of grid "
                                   f"{list(self.launch.grid)} {what}s through {why}"
                                   + (f" (line {line})" if line else "")}
        raise _Stop()

    # ---- the patches -------------------------------------------------------------------------------------------
    def install(self, interpreter: Any) -> list[tuple[Any, str, Any]]:
        """Patch the interpreter's builder class; the (owner, name, original) list to undo it."""
        b = interpreter.InterpreterBuilder
        TH = interpreter.TensorHandle
        np_dtype = interpreter._get_np_dtype
        tl = interpreter.tl
        undo: list[tuple[Any, str, Any]] = []
        run = self

        def patch(name: str, make: Any) -> None:
            orig = getattr(b, name, None)
            if orig is None:
                return
            undo.append((b, name, orig))
            setattr(b, name, make(orig))

        def masked_load(orig: Any) -> Any:
            def f(self: Any, ptrs: Any, mask: Any, other: Any, *a: Any, **k: Any) -> Any:
                run.tick()
                size = interp_traffic._elem_size(ptrs)
                lanes = run.check(ptrs, mask, size, "load")
                run.cur.load_bytes += lanes.size * size
                run.cur.loads += 1
                dt = ptrs.get_element_ty()
                data = np.zeros(np.shape(ptrs.data), dtype=np_dtype(dt))
                if other is not None and mask is not None:
                    data = np.where(np.asarray(mask.data, dtype=bool), data,
                                    np.broadcast_to(np.asarray(other.data), data.shape)).astype(data.dtype)
                return TH(data, dt)
            return f

        def masked_store(orig: Any) -> Any:
            def f(self: Any, ptrs: Any, value: Any, mask: Any, *a: Any, **k: Any) -> Any:
                run.tick()
                size = interp_traffic._elem_size(ptrs)
                lanes = run.check(ptrs, mask, size, "store")
                run.cur.store_bytes += lanes.size * size
                run.cur.stores += 1
                return None
            return f

        def atomic_rmw(orig: Any) -> Any:
            def f(self: Any, op: Any, ptr: Any, val: Any, mask: Any, *a: Any, **k: Any) -> Any:
                size = interp_traffic._elem_size(ptr)
                lanes = run.check(ptr, mask, size, "atomic")
                run.cur.load_bytes += lanes.size * size
                run.cur.store_bytes += lanes.size * size
                return TH(np.zeros(np.shape(val.data), dtype=np.asarray(val.data).dtype), val.dtype.scalar)
            return f

        def atomic_cas(orig: Any) -> Any:
            def f(self: Any, ptr: Any, cmp: Any, val: Any, *a: Any, **k: Any) -> Any:
                size = interp_traffic._elem_size(ptr)
                lanes = run.check(ptr, None, size, "atomic")
                run.cur.load_bytes += lanes.size * size
                run.cur.store_bytes += lanes.size * size
                return TH(np.zeros(np.shape(cmp.data), dtype=np.asarray(cmp.data).dtype), cmp.dtype.scalar)
            return f

        def dot(orig: Any) -> Any:
            def f(self: Any, a: Any, b_: Any, d: Any, input_precision: Any, *rest: Any) -> Any:
                sa, sb = np.shape(a.data), np.shape(b_.data)
                flops = 2.0 * float(np.prod(sa[:-1])) * float(sa[-1]) * float(sb[-1])
                # An fp32 operand cast from bf16/fp16 (or both): the interpreter-only upcast of a narrow dot (the
                # gallery's UPCAST_DOT; attention's p @ v next to an upcast v), which the GPU runs narrow.
                narrow = getattr(a, NARROW, None) or getattr(b_, NARROW, None)
                prec = narrow or interp_traffic.dot_precision(a, b_, input_precision, tl)
                run.cur.dot_flops[prec] = run.cur.dot_flops.get(prec, 0.0) + flops
                tile = (int(np.prod(sa[:-1])), int(sb[-1]), int(sa[-1]))
                if tile[0] * tile[1] > run.cur.dot_tile[0] * run.cur.dot_tile[1]:
                    run.cur.dot_tile = tile
                return orig(self, a, b_, d, input_precision, *rest)
            return f

        def ew(orig: Any, per: int) -> Any:
            def f(self: Any, *a: Any, **k: Any) -> Any:
                out = orig(self, *a, **k)
                run.cur.ew_flops += per * np.size(out.data)
                return out
            return f

        def sfu(orig: Any) -> Any:
            def f(self: Any, *a: Any, **k: Any) -> Any:
                out = orig(self, *a, **k)
                run.cur.sfu_ops += np.size(out.data)
                return out
            return f

        def binary(orig: Any) -> Any:
            def f(self: Any, lhs: Any, rhs: Any, op: Any) -> Any:
                out = orig(self, lhs, rhs, op)
                if np.size(out.data) == 0 or out.data.dtype.kind not in "iu" or op not in (np.add, np.subtract,
                                                                                          np.multiply):
                    return out
                shadowed = hasattr(lhs, EXACT) or hasattr(rhs, EXACT)
                if not shadowed and out.data.dtype != np.int32:
                    return out
                exact = op(_exact(lhs), _exact(rhs))
                if shadowed or ((exact > I32_MAX) | (exact < I32_MIN)).any():
                    if not np.array_equal(exact, np.asarray(out.data).astype(np.int64)):
                        setattr(out, EXACT, exact)
                        if run.overflow_line is None:
                            run.overflow_line = _kernel_line(run.launch.file)
                return out
            return f

        def addptr(orig: Any) -> Any:
            def f(self: Any, ptr: Any, offset: Any) -> Any:
                out = orig(self, ptr, offset)
                w = getattr(ptr, WRAPPED, None)
                if hasattr(offset, EXACT):
                    moved = getattr(offset, EXACT) != np.asarray(offset.data).astype(np.int64)
                    w = moved if w is None else (w | moved)
                if w is not None:
                    setattr(out, WRAPPED, np.broadcast_to(w, np.shape(out.data)))
                return out
            return f

        def cast(orig: Any) -> Any:
            def f(self: Any, src: Any, dst_type: Any) -> Any:
                out = orig(self, src, dst_type)
                s, d = getattr(src.dtype, "scalar", src.dtype), getattr(dst_type, "scalar", dst_type)
                if d == tl.float32 and s in (tl.bfloat16, tl.float16):
                    setattr(out, NARROW, "bf16" if s == tl.bfloat16 else "fp16")
                return out
            return f

        def shaped(orig: Any) -> Any:  # shape ops carry the shadows, the wrapped lanes and the narrow tag along
            def f(self: Any, *a: Any, **k: Any) -> Any:
                out = orig(self, *a, **k)
                hs = [x for x in a if isinstance(x, TH)]
                tag = next((getattr(x, NARROW) for x in hs if hasattr(x, NARROW)), None)
                if tag is not None and isinstance(out, TH):
                    setattr(out, NARROW, tag)
                for marker, sub in ((EXACT, lambda x: TH(_exact(x), tl.int64)),
                                    (WRAPPED, lambda x: TH(np.broadcast_to(getattr(x, WRAPPED, False),
                                                                           np.shape(x.data)).copy(), tl.int1))):
                    if isinstance(out, TH) and any(hasattr(x, marker) for x in hs):
                        try:
                            again = orig(self, *[sub(x) if isinstance(x, TH) else x for x in a], **k)
                            val = np.asarray(again.data)
                            if marker == EXACT:
                                val = val.astype(np.int64)
                                if np.array_equal(val, np.asarray(out.data).astype(np.int64)):
                                    continue
                            setattr(out, marker, val)
                        except Exception:  # noqa: BLE001, S112 - an op the shadow cannot follow: it stops there
                            continue
                return out
            return f

        patch("create_masked_load", masked_load)
        patch("create_masked_store", masked_store)
        patch("create_atomic_rmw", atomic_rmw)
        patch("create_atomic_cas", atomic_cas)
        patch("create_dot", dot)
        patch("binary_op", binary)
        patch("create_addptr", addptr)
        patch("cast_impl", cast)
        for name, per in EW_OPS.items():
            patch(name, lambda o, per=per: ew(o, per))
        for name in SFU_OPS:
            patch(name, sfu)
        for name in SHAPE_OPS:
            patch(name, shaped)
        return undo

    def tick(self) -> None:
        if time.perf_counter() > self.deadline:
            raise _Stop()


LOOP_KEEP = 3  # iterations run per loop: the first two and the last


def _sampled_loop(run: _Run, values: range) -> Any:
    """The loop's iterations as the sampled program runs them: all of a short loop; else the first two and the
    last, the second's counts added for each skipped one once the loop ends."""
    n = len(values)
    if values.step > 1 and values.step == run.launch.grid[0] and values.start == run.program[0]:
        # for tile in range(pid, n_tiles, NUM_PROGRAMS): a persistent kernel; on a GPU it launches one program per
        # SM or so (the dry run's grid is the host's: NUM_SMS read on a CPU), and the tiles are its parallel work
        run.persistent_tiles = max(run.persistent_tiles or 0, values.stop)
    if n <= LOOP_KEEP:
        yield from values
        return
    yield values[0]
    before = run.cur.scaled(1.0)
    yield values[1]
    second = run.cur.scaled(1.0)
    yield values[-1]
    step = Counts()
    step.add(second)
    step.add(before, -1.0)
    run.cur.add(step, n - LOOP_KEEP)
    run.loops += 1


def _exact(h: Any) -> np.ndarray:
    got = getattr(h, EXACT, None)
    return got if got is not None else np.asarray(h.data).astype(np.int64)


def run_programs(launch: DryLaunch, max_programs: int = 16, budget_s: float = SAMPLE_BUDGET_S,
                 meta: dict[str, Any] | None = None, grid: tuple[int, int, int] | None = None) -> Sample:
    """Run some programs of `launch` (its own meta-parameters, or `meta` on top with `grid`) in stand-in memory;
    their counts extrapolated to the whole grid, and an int32 offset overflow if one shows."""
    from triton.runtime import interpreter

    grid = grid or launch.grid
    out = Sample(launch=launch.name, grid=grid)
    plan = lattice(grid, max_programs)
    out.planned = len(plan)
    kernel = interpreted(launch.kernel, interpreter)
    if kernel is None:
        out.notes.append(f"{launch.name}: not a kernel the interpreter can run, no programs run")
        return out
    args = {k: stand_in(v) for k, v in launch.args.items()}
    args.update(meta or {})
    run = _Run(launch)
    fn = kernel.rewrite()
    executor = interpreter.GridExecutor(fn, kernel.arg_names, (len(plan), 1, 1), [])
    executor._init_args_hst = lambda a, k: (list(a), dict(k))  # stand-ins stay as they are: nothing to copy
    executor._restore_args_dev = lambda *a: None
    builder = interpreter.interpreter_builder
    weights: list[float] = []
    per: list[Counts] = []
    completed = [0]  # programs that ran to their end (a stop inside one leaves it out)

    import builtins

    def loop_range(*a: Any, **k: Any) -> Any:
        return _sampled_loop(run, builtins.range(*a, **k))

    langs = [v for v in fn.__globals__.values() if v is interpreter.tl or v is getattr(interpreter.tl, "core", None)]

    def sample_lang_ranges() -> None:  # over the interpreter's own tl.range (a Python range), which it restores
        for lang in langs:
            for name in ("range", "static_range"):
                orig = getattr(lang, name, None)
                if callable(orig) and not getattr(orig, "_p2t_loop", False):
                    wrapped = (lambda *a, _o=orig, **k: _sampled_loop(run, _o(*a, **k)))
                    wrapped._p2t_loop = True  # type: ignore[attr-defined]
                    setattr(lang, name, wrapped)

    patch_lang = interpreter._patch_lang

    def _patch_lang(f: Any) -> Any:  # every @jit helper's call patches triton.language again (tl.cdiv, ...)
        scope = patch_lang(f)
        sample_lang_ranges()
        return scope

    def set_grid_dim(nx: int, ny: int, nz: int) -> None:
        type(builder).set_grid_dim(builder, *grid)

    def set_grid_idx(i: int, y: int, z: int) -> None:
        completed[0] = len(per)
        if per:
            run.end_program()
        if time.perf_counter() > run.deadline and per:
            raise _Stop()
        run.cur = Counts()
        per.append(run.cur)
        weights.append(plan[i][1])
        run.program = plan[i][0]
        type(builder).set_grid_idx(builder, *plan[i][0])

    if not interp_traffic._LOCK.acquire(blocking=False):
        raise RuntimeError("interp_traffic.counting() is active: sampled runs cannot nest in it")
    undo = run.install(interpreter)
    builder.set_grid_dim, builder.set_grid_idx = set_grid_dim, set_grid_idx
    interpreter._patch_lang = _patch_lang
    kernel_globals = fn.__globals__
    had_range = "range" in kernel_globals
    own_range = kernel_globals.get("range")
    kernel_globals["range"] = loop_range  # the kernel's `for i in range(...)` (the module's name, restored below)
    # @jit helpers of a GPU-path module are JITFunctions: interpreted while its programs run, put back after
    helpers = {k: v for k, v in kernel_globals.items() if type(v).__name__ == "JITFunction"}
    kernel_globals.update({k: interpreted(v, interpreter) for k, v in helpers.items()})
    t0 = time.perf_counter()
    run.deadline = t0 + budget_s
    try:
        executor(**args)
        completed[0] = len(per)
        if per:
            run.end_program()
    except Exception as e:  # noqa: BLE001 - the interpreter wraps our stop in InterpreterError
        if not _caused_by_stop(e):
            out.notes.append(f"{launch.name}: a sampled program raised {type(e).__name__}: {str(e)[:200]}")
    finally:
        for owner, name, orig in reversed(undo):
            setattr(owner, name, orig)
        del builder.set_grid_dim, builder.set_grid_idx
        interpreter._patch_lang = patch_lang
        if had_range:
            kernel_globals["range"] = own_range
        else:
            kernel_globals.pop("range", None)
        kernel_globals.update(helpers)
        interp_traffic._LOCK.release()
    out.seconds = time.perf_counter() - t0
    out.finding = run.finding
    per, weights = per[:completed[0]], weights[:completed[0]]
    if run.outside:
        out.notes.append(f"{launch.name}: {run.outside}")
    done = list(zip(per, weights))
    total_w = sum(w for _, w in done)
    if len(done) == len(plan) and done:
        coarse = Counts()
        for c, (_, _, cw) in zip(per, plan):
            coarse.add(c, cw)
        fine = Counts()
        for c, w in done:
            fine.add(c, w)
        errs = [abs(a - b) / a for a, b in ((fine.load_bytes + fine.store_bytes, coarse.load_bytes +
                                             coarse.store_bytes), (sum(fine.dot_flops.values()),
                                                                   sum(coarse.dot_flops.values()))) if a > 0]
        out.error = max(errs, default=0.0)
    if done and len(done) < len(plan) and run.finding is None:
        out.notes.append(f"{launch.name}: {len(done)} of {len(plan)} sampled programs ran within {budget_s:.0f} s; "
                         "they stand for the whole grid")
    scale = (grid[0] * grid[1] * grid[2]) / total_w if total_w else 0.0
    for c, w in done:
        out.total.add(c, w * scale)
    out.programs = [plan[i][0] for i in range(len(done))]
    out.per_program = [c.load_bytes + c.store_bytes for c, _ in done]
    out.touched = run.touched
    out.persistent_tiles = run.persistent_tiles
    return out


_INTERPRETED: dict[Any, Any] = {}  # a JITFunction's Python function -> its InterpretedFunction


def interpreted(kernel: Any, interpreter: Any) -> Any:
    """The kernel as the interpreter runs it: itself under TRITON_INTERPRET, else (a GPU-path import's JITFunction)
    an InterpretedFunction of its Python function, made once; None for anything else."""
    if getattr(kernel, "rewrite", None) is not None:
        return kernel
    fn = getattr(kernel, "fn", None)
    if fn is None or type(kernel).__name__ != "JITFunction":
        return None
    if fn not in _INTERPRETED:
        _INTERPRETED[fn] = interpreter.InterpretedFunction(fn)
    return _INTERPRETED[fn]


def _caused_by_stop(e: BaseException | None) -> bool:
    seen = 0
    while e is not None and seen < 8:
        if isinstance(e, _Stop):
            return True
        e = e.__cause__ or e.__context__
        seen += 1
    return False
