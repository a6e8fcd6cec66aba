"""Every input the tool invents for a case, and the tier each case belongs to (references/task-format.md, "Tiers").

Both task forms ask this module for their cases: form (a)'s shapes (the reference's SHAPES, or the default sets
below), a KernelBench problem's plan (its own sizes, then variants), the layouts, the NaN/inf and extreme values,
and the perturbation of a model's trainable parameters. sizes.py holds the KernelBench size arithmetic this uses.

Tiers: the verdict is about the user's problem.
- contract: the problem's own recipe (get_inputs() and the model, or form (a)'s declared SHAPES/DTYPES and the
  user's cases) at full size (GPU) or shrunk (CPU), and size variants that keep its structure (odd, small, long,
  single). pass/fail is decided on these alone.
- robustness: inputs the reference accepts but the problem never produces: non-contiguous layouts, empty dims,
  NaN/inf, extreme magnitudes. Each failure is a named finding with its fix, reported beside the verdict. A kind
  the user requires (strict=true, the sidecar's `require = [...]`, the worker's args["require"], or a form-(a)
  reference that declares such cases) is contract instead.
"""

from __future__ import annotations

import inspect
import math
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import torch

from ... import tier_rules as tr
from ... import value_recipes
from . import sizes as sz
from .nest import tensors as _tensors
from .tasks import TaskError, dtype_from_name

# The tiers and their kinds have one home, shared with audit_kernel (tier_rules.py); re-exported for the worker.
CONTRACT, ROBUSTNESS, REQUIRE_KINDS, TITLES, FIXES = tr.CONTRACT, tr.ROBUSTNESS, tr.REQUIRE_KINDS, tr.TITLES, tr.FIXES
LAYOUTS = tr.LAYOUT_VARIANTS  # layout_variants' names (tier_rules: the audit's reproduce lines name them too)
NAN_POSITIONS, INF_POSITIONS = 3, 2
EXTREME_SCALE = 1e4  # |x| ~ 1e4: exp(x) overflows without the max subtracted; x * x stays inside fp32

DEFAULT_SHAPES: dict[int, dict[str, tuple[int, ...]]] = {
    1: {"small": (1024,), "medium": (98432,), "large": (1048583,), "edge_empty": (0,), "edge_single": (1,),
        "odd_7": (7,), "odd_1000": (1000,), "odd_4097": (4097,)},
    2: {"small": (16, 128), "medium": (257, 1000), "large": (1823, 781), "edge_empty": (0, 128),
        "edge_single": (1, 1), "odd_7": (7, 4097), "odd_rows": (1000, 7)},
    3: {"small": (2, 16, 64), "medium": (4, 127, 300), "large": (8, 513, 781), "edge_empty": (0, 4, 8),
        "edge_single": (1, 1, 1), "odd_7": (7, 7, 7)},
}


def bench_shape(mod: ModuleType) -> tuple[str, Any]:
    """A function-form reference's benchmark case: BENCH_SHAPES' first entry, else its (or the default) SHAPES'
    "large" one, else the one with the most elements (the last of equals): what run_benchmark times and the dry run
    checks at full size (issue 46). Not simply the last: SHAPES = {"small": (1000,), "edge_empty": (0,), "odd_7": (7,)}
    would time, and dry-run as "the full size", a 7-element edge case."""
    bench = getattr(mod, "BENCH_SHAPES", None)
    if bench:
        name = next(iter(bench))
        return name, bench[name]
    shapes = getattr(mod, "SHAPES", None) or DEFAULT_SHAPES[int(getattr(mod, "RANK", 1))]
    if "large" in shapes:
        return "large", shapes["large"]
    sized = {k: _numel(v) for k, v in shapes.items()}
    if None in sized.values():  # a shape that is not sizes (a dict a make_inputs reads): the declared order decides
        name = list(shapes)[-1]
    else:
        name = max(reversed(list(sized)), key=lambda k: sized[k])  # reversed: the last of equals wins
    return name, shapes[name]


def _numel(shape: Any) -> int | None:
    """Elements of a tuple of sizes, None for anything else."""
    if isinstance(shape, int) and not isinstance(shape, bool):
        return shape
    if isinstance(shape, (tuple, list)) and all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
        return math.prod(shape)
    return None


def full_size(mod: ModuleType, kernelbench: bool, sizes: dict[str, Any] | None) -> tuple[Any, str]:
    """The problem's full size and what it is: KernelBench's own sizes with `sizes` (the user's, or the sidecar's
    [sizes]) on top, never [sizes.interpreter]; a function form's benchmark shape. The size a GPU validates and
    times, which the interpreter never runs."""
    if kernelbench:
        pinned = sz.check_sizes(mod, sizes)
        at = {**sz.size_constants(mod), **pinned}
        return at, (f"the problem's sizes with yours ({sz.fmt(pinned)})" if pinned else "the problem's own sizes")
    name, shape = bench_shape(mod)
    return shape, f"the benchmark's shape {name}"


def required(args: dict[str, Any]) -> set[str]:
    """The robustness kinds the caller made part of the contract (args["require"]; "all_triton" is not a kind)."""
    return {k for k in args.get("require") or [] if k in REQUIRE_KINDS}


def case_seed(args: dict[str, Any], name: str, dtype: torch.dtype, trial: int = 0) -> int:
    """The seed of a case's inputs: the same for a case and the layout/NaN variants built from its trial 0."""
    return (int(args.get("seed", 0)) * 1_000_003 + zlib.crc32(f"{name}:{dtype}".encode()) + trial) % 2**31


tier_of = tr.tier_of


class Spec(NamedTuple):
    """One form-(a) case: make_inputs(case) runs with this name, shape, dtype and scale."""

    name: str
    shape: Any
    dtype: torch.dtype
    scale: float
    tier: str = CONTRACT
    why: str = ""
    kind: str | None = None  # the robustness kind it tests (empty, ...), None for the problem's own inputs
    values: dict[str, str] | None = None  # value recipes of a user's case (value_recipes.py)
    hook: str | None = None  # a user's inputs hook: a file defining edit(inputs, case)


def _has_empty(shape: Any) -> bool:
    return isinstance(shape, (tuple, list)) and any(isinstance(s, int) and s == 0 for s in shape)


def form_a_specs(mod: ModuleType, dtypes: list[str] | None, cases: list[dict] | None, replace: bool,
                 only: list[str] | None = None, require: set[str] | None = None) -> list[Spec]:
    """Every form-(a) case to run, with its tier: the reference's SHAPES (contract: the user chose them) or the
    default sets (contract, except edge_empty: robustness "empty"), then the user's cases (contract)."""
    require = require or set()
    declared = getattr(mod, "SHAPES", None)
    if declared is None:
        rank = int(getattr(mod, "RANK", 1))
        if rank not in DEFAULT_SHAPES:
            raise TaskError("inputs", f"RANK={rank} has no default shapes; declare SHAPES", usage=True)
        shapes = DEFAULT_SHAPES[rank]
    else:
        shapes = declared
    names = dtypes or list(getattr(mod, "DTYPES", None) or ["float32"])
    dts = [dtype_from_name(n) for n in names]
    specs: list[Spec] = []
    user = []
    for c in cases or []:
        if c.get("shape") is None:
            hint = (" (sizes are for a KernelBench reference's module-level constants; this reference takes "
                    "shape, as make_inputs(case) reads it)") if c.get("sizes") is not None else ""
            raise TaskError("inputs", f"case {c.get('name') or c} has no shape{hint}", usage=True)
        shape = c["shape"]
        shape = tuple(shape) if isinstance(shape, list) else shape
        user.append((str(c.get("name") or f"user_{len(user)}"), shape,
                     dtype_from_name(c["dtype"]) if c.get("dtype") else None, float(c.get("scale", 1.0)),
                     c.get("values"), c.get("hook")))
    if not replace:
        for dt in dts:
            for name, shape in dict(shapes).items():
                if declared is not None:
                    specs.append(Spec(name, shape, dt, 1.0, CONTRACT, "declared in the reference's SHAPES"))
                elif _has_empty(shape):
                    tier = tier_of("empty", require)
                    specs.append(Spec(name, shape, dt, 1.0, tier, "the tool's default empty case (the reference "
                                      "declares no SHAPES)", "empty"))
                else:
                    specs.append(Spec(name, shape, dt, 1.0, CONTRACT, "the tool's default shapes (the reference "
                                      "declares no SHAPES)"))
    for name, shape, dt, scale, values, hook in user:
        for d in [dt] if dt is not None else dts:
            specs.append(Spec(name, shape, d, scale, CONTRACT, "your case", None, values, hook))
    if only:
        unknown = set(only) - {s.name for s in specs}
        if unknown:
            raise TaskError("inputs", f"only_cases names {sorted(unknown)} not among {sorted({s.name for s in specs})}",
                            usage=True)
        specs = [s for s in specs if s.name in only]
    if not specs:
        raise TaskError("inputs", "no cases to run: replace_cases=true needs at least one entry in cases", usage=True)
    return specs


def layouts_tier(mod: ModuleType, args: dict[str, Any], kernelbench: bool) -> tuple[bool, str, str]:
    """(run the layout variants, their tier, why), as tier_rules.layouts_tier decides from the reference's
    NONCONTIGUOUS (or an explicit noncontiguous=) and what is required."""
    return tr.layouts_tier(args.get("noncontiguous", getattr(mod, "NONCONTIGUOUS", None)), required(args), kernelbench)


def layout_variants(inputs: list[Any]) -> dict[str, list[Any]]:
    """Same values, other layouts: a transposed layout (rank >= 2) and a strided slice."""
    tensors = _tensors(inputs)
    if not tensors or all(t.numel() <= 1 for t in tensors):
        return {}
    out: dict[str, list[Any]] = {}
    if any(t.dim() >= 2 for t in tensors):
        out["transposed"] = [
            x.transpose(-1, -2).contiguous().transpose(-1, -2) if isinstance(x, torch.Tensor) and x.dim() >= 2 else x
            for x in inputs
        ]

    def strided(x: torch.Tensor) -> torch.Tensor:
        if x.dim() == 0:
            return x
        # The gaps hold NaN, whatever poison the last candidate run left in force (run B's is a finite -7777,
        # which an ignored stride turns into a plain mismatch instead of the NaN the fix explains).
        big = torch.full((*x.shape[:-1], 2 * x.shape[-1]), float("nan"), dtype=x.dtype, device=x.device)
        view = big[..., ::2]
        view.copy_(x)
        return view

    out["strided"] = [strided(x) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
    return out


def extreme_inputs(inputs: list[Any]) -> list[Any]:
    """The same inputs with every floating tensor scaled by EXTREME_SCALE (|x| ~ 1e4; fp16/bf16 stay finite)."""
    return [x * EXTREME_SCALE if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]


def extreme_spec(specs: list[Spec], require: set[str]) -> Spec | None:
    """Form (a): the first non-empty default-or-declared case again with values scaled by EXTREME_SCALE (the
    `scale` make_inputs' case.randn multiplies by); robustness unless required."""
    base = next((s for s in specs if s.kind is None and s.values is None and not _has_empty(s.shape)), None)
    if base is None:
        return None
    return Spec(base.name, base.shape, base.dtype, base.scale * EXTREME_SCALE, tier_of("extreme", require),
                "values scaled to |x| ~ 1e4 (robustness unless required)", "extreme")


def nan_inf_inputs(inputs: list[Any], seed: int) -> tuple[int, list[Any]] | None:
    """NaN and +-inf put at seeded positions of the first floating input big enough: (its index, the inputs)."""
    idx = next((i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.is_floating_point()
                and x.numel() >= NAN_POSITIONS + INF_POSITIONS), None)
    if idx is None:
        return None
    x = inputs[idx].clone()
    g = torch.Generator(device="cpu").manual_seed(seed)
    pos = torch.randperm(x.numel(), generator=g)[:NAN_POSITIONS + INF_POSITIONS].to(x.device)
    flat = x.view(-1)
    flat[pos[:NAN_POSITIONS]] = float("nan")
    flat[pos[NAN_POSITIONS:NAN_POSITIONS + 1]] = float("inf")
    flat[pos[NAN_POSITIONS + 1:]] = float("-inf")
    return idx, [x if i == idx else a for i, a in enumerate(inputs)]


def input_names(fn: Any) -> list[str]:
    """The names a value recipe may use for the inputs: the reference's parameters (Model.forward's for KernelBench)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"]


def edit_values(inputs: list[Any], values: dict[str, str] | None, hook: str | None, names: list[str], seed: int,
                case: Any) -> list[Any]:
    """The inputs of a case with its value recipes applied (value_recipes.py), then its hook's edit(inputs, case)."""
    out = list(inputs)
    for key, recipe in (values or {}).items():
        i = int(key) if key.isdigit() else (names.index(key) if key in names else None)
        if i is None or i >= len(out) or not isinstance(out[i], torch.Tensor):
            raise TaskError("inputs", f"values: no tensor input {key!r}; the inputs are {names or list(range(len(out)))}"
                            " (name them by the reference's parameter names or by position)", usage=True)
        out[i] = _apply(out[i], value_recipes.parse(recipe), seed + i)
    if hook:
        from .tasks import load_module

        edited = load_module(Path(hook), "hook").edit(out, case)
        out = list(edited) if isinstance(edited, (list, tuple)) else [edited]
    return out


def _apply(t: torch.Tensor, steps: list[value_recipes.Step], seed: int) -> torch.Tensor:
    t = t.clone()
    g = torch.Generator(device="cpu").manual_seed(seed)
    for st in steps:
        if st.kind == "scale":
            t.mul_(st.value)
        elif st.kind == "fill":
            t.fill_(st.value)
        elif st.kind == "fraction":
            n = round(st.share * t.numel())
            pos = torch.randperm(t.numel(), generator=g)[:n].to(t.device)
            t.view(-1)[pos] = st.value
        elif t.dim() >= 2:  # tril / triu of the last two dims
            t = torch.tril(t) if st.kind == "tril" else torch.triu(t)
    return t


def perturb(model: Any, seed: int) -> int:
    """Seeded noise on every trainable floating parameter (in place); buffers are never touched: a causal mask, a
    position table or running statistics are part of the problem. A constant parameter (LayerNorm's weight 1 and
    bias 0) moves by 0.1 * max(1, |value|) * N(0, 1); a random one by 10% of its mean magnitude; an all-positive
    one (scales) is scaled by exp(0.1 N(0, 1)) so it stays positive. Returns the number of tensors changed."""
    n = 0
    with torch.no_grad():
        for name, t in model.named_parameters():
            if not t.requires_grad or not t.is_floating_point() or t.numel() == 0:
                continue
            g = torch.Generator(device=t.device).manual_seed((seed * 1_000_003 + zlib.crc32(name.encode())) % 2**63)
            noise = torch.randn(t.shape, generator=g, device=t.device, dtype=torch.float32)
            tf = t.detach().float()
            if bool((tf > 0).all()):
                new = tf * torch.exp(0.1 * noise)
            else:
                constant = bool((tf == tf.reshape(-1)[0]).all())
                scale = max(1.0, abs(float(tf.reshape(-1)[0]))) if constant else float(tf.abs().mean())
                new = tf + 0.1 * scale * noise
            t.data.copy_(new.to(t.dtype))
            n += 1
    return n


def kept_buffers(model: Any) -> int:
    """Floating buffers of a model (left as the problem defines them)."""
    return sum(1 for _, b in model.named_buffers() if b.is_floating_point()) if hasattr(model, "named_buffers") else 0


# ---- KernelBench: the plan ---------------------------------------------------------------------------------------
@dataclass
class Planned:
    """One KernelBench case to run: a name (what only_cases matches), the sizes, and how to run it."""

    name: str
    sizes: dict[str, int]
    kind: str = "size"  # main | size | user | layout | nan_inf | extreme
    optional: bool = True  # a variant the reference rejects is skipped with a note
    tier: str = CONTRACT
    why: str = "a size variant that keeps the problem's structure"
    robust: str | None = None  # the robustness kind it tests (layouts, empty, nan), None for the problem's own
    holds: list[str] = field(default_factory=list)  # the sizes this variant is about: a repair never moves them
    values: dict[str, str] | None = None  # a user's case: value recipes (value_recipes.py)
    hook: str | None = None  # a user's case: a file defining edit(inputs, case)
    fallbacks: list[Planned] = field(default_factory=list)  # tried, in order, when the reference rejects this one
    layouts: list[str] = field(default_factory=lambda: list(LAYOUTS))  # kind "layout": which ones run

    @property
    def tiles(self) -> bool:
        """The case sized from the candidate's launches to two or more of its blocks (before or after sizing)."""
        return self.grow in ("tiles", "sized")
    grow: str | None = None  # "tiles": sized at run time from the candidate's launches (widen_tiles)


@dataclass
class Plan:
    """Everything the KernelBench validation runs, and what the report says about its sizes."""

    defaults: dict[str, int]
    pinned: dict[str, int]
    main: Planned
    cases: list[Planned]
    full_size_run: bool
    notes: list[str] = field(default_factory=list)
    start: dict[str, int] = field(default_factory=dict)  # the problem's sizes (with the user's pins)
    rels: list[tuple[str, str, str]] = field(default_factory=list)
    keep: set[str] = field(default_factory=set)


def widen_long(mod: ModuleType, p: Plan, c: Planned, block: int | None) -> str | None:
    """A long_<size> variant made to reach past two of the candidate's own blocks along that size (2 * block + 1,
    odd), as far as the problem's own size goes: a loop or grid that stops at whole blocks shows only from the second
    block on, and LONG_DIM may sit inside the first one (a 1024-wide chunk). Only along an inner size (inner_sizes):
    along an outer one the grid most often has a program per row, and LONG_DIM's rows already end in a partial block
    of any tile up to 166 wide. The note says what moved."""
    if not block or not c.name.startswith("long_") or not c.holds:
        return None
    k = c.holds[0]
    inner = inner_sizes(mod, c.sizes, [k])
    if inner is not None and k not in inner:  # a row per program along it: LONG_DIM's programs show a grid's tail
        return None
    top = p.start.get(k, 0)
    new = min(2 * block + 1, top)
    if new % 2 == 0 and new > 1 and new == top:
        new -= 1
    if new <= c.sizes.get(k, 0):
        return None
    old = c.sizes[k]
    c.sizes = {**c.sizes, k: new}
    c.fallbacks = []
    _keep_invariants(mod, c, p.rels, p.keep)
    return (f"{c.name}: {k}={new} instead of {old}, past two of the candidate's {block}-wide blocks "
            f"(read from its launches)")


TILES_MAX_ELEMS = 1 << 19  # the tiles case's inputs + outputs: 8x the shrunk main case, a few seconds per launch


def widen_tiles(mod: ModuleType, p: Plan, c: Planned, blocks: list[int], group: int | None) -> str:
    """The tiles case sized from the candidate's launches (issue 36 item 4): starting from the small case, each size
    the problem has at least two of the candidate's blocks of (the inner ones first: inner_sizes) grows to 2 * block + 1 of the widest
    such block that fits the budget (2 * GROUP * block + 1 for the largest when a grouped swizzle was launched, so a second group
    exists), odd so a tail is there too, as long as inputs + outputs stay within TILES_MAX_ELEMS. Head counts and
    the sizes they divide keep the problem's structure and are left alone. Returns what it did, for the notes;
    c.sizes is left empty when no size could grow (the case is skipped)."""
    ratio_keys = {k for pair in sz.ratios(mod, p.start, list(p.start)).items() for k in pair}
    every = sz.varied(p.defaults, {}, sz.derived(mod))
    cur = dict(c.sizes)
    grown: list[str] = []
    left: list[str] = []
    names = [k for k in every if k not in p.keep and k not in ratio_keys]
    # a grouped swizzle groups the rows of the output: the largest size first, as the group's second block row needs
    inner = set() if group else inner_sizes(mod, cur, names) or set()
    for k in sorted(names, key=lambda k: (k not in inner, -p.start[k])):
        fits = [b for b in blocks if 2 * b + 1 <= p.start[k]]
        if not fits:
            continue
        targets = [2 * b + 1 for b in reversed(fits)]  # the widest block first, narrower ones when it costs too much
        if group and not grown and 2 * group * fits[-1] + 1 <= p.start[k]:
            targets.insert(0, 2 * group * fits[-1] + 1)  # a second group of GROUP block rows
        for t in targets:
            if cur[k] >= t:
                break
            trial = sz.settle(mod, sz.repair({**cur, k: t}, [r for r in p.rels if r[0] == "le"], p.keep | {k}),
                              p.keep)
            n, ok = sz.footprint(mod, trial)
            if ok is not False and (n is None or n <= TILES_MAX_ELEMS):
                cur = trial
                grown.append(f"{k}={t}")
                break
        else:
            left.append(k)
    c.grow = "sized"
    if not grown:
        c.sizes = {}
        return (f"tiles: not run: no size could reach two of the candidate's blocks ({blocks or 'none recorded'}) "
                f"within {TILES_MAX_ELEMS:,} input + output elements" + (f" ({', '.join(left)} too big)" if left
                                                                          else ""))
    c.sizes, c.fallbacks = cur, []
    _keep_invariants(mod, c, p.rels, p.keep)
    return (f"tiles: {', '.join(grown)}: at least two of the candidate's own blocks (read from its launches"
            + (f", grouped swizzle of {group}" if group else "") + ") with a tail"
            + (f"; {', '.join(left)} left small (inputs + outputs over {TILES_MAX_ELEMS:,})" if left else ""))


def inner_sizes(mod: ModuleType, small: dict[str, int], names: list[str]) -> set[str] | None:
    """Of `names`, the sizes that set some input's last (contiguous) dimension, read by growing each by one at the
    small sizes on fake tensors; None when the inputs cannot be built fake. A kernel's block most often runs along
    the last dimension while its grid covers the outer ones one program each (a row per program): the widened cases
    put their tails there (issue 49: log_softmax's tiles case grew batch_size to 2049 rows of 49, 2049 interpreted
    programs a run and 126 s of a 160 s validation, and dim, along which the 1024-wide block runs, kept no tail)."""
    base = sz.input_shapes(mod, small)
    if not base:
        return None
    out = set()
    for k in names:
        bumped = sz.input_shapes(mod, {**small, k: small[k] + 1}) or []
        if any(a and b and a[-1] != b[-1] for a, b in zip(base, bumped)):
            out.add(k)
    return out


def plan(mod: ModuleType, device: str, sizes: dict[str, Any] | None, user_cases: list[dict[str, Any]] | None,
         replace: bool = False, only: list[str] | None = None, require: set[str] | None = None) -> Plan:
    """The cases of a KernelBench validation: the full size on a GPU (shrunk under the interpreter), then layout,
    odd, small, 1, 0 and NaN/inf variants, then the user's cases (size overrides on top of the main case). Each
    says its tier: layouts, zero and NaN/inf are robustness unless `require` names their kind."""
    require = require or set()
    defaults = sz.size_constants(mod)
    pinned = sz.check_sizes(mod, sizes)
    start = {**defaults, **pinned}
    follows = sz.derived(mod)  # sizes the source computes from others (input_shape = (num_classes,)): never varied
    keep = set(pinned)
    vary = sz.varied(defaults, pinned, follows)  # what shrinking may change: the main case keeps the sizes you pinned
    every = sz.varied(defaults, {}, follows)  # what the edge variants change: every size, pinned or not
    rels = sz.relations(defaults, every)
    ratio = sz.ratios(mod, start, every)  # read once at the problem's sizes (shrunk ones have chance ratios)
    notes: list[str] = []
    moved = {k: v for k, v in pinned.items() if defaults.get(k) != v}  # a pin at the problem's own value moves nothing
    main = _main_case(mod, device, start, moved, vary, keep, ratio, notes)
    full = main.sizes == defaults  # sizes equal to the full size are the full size (issue 48)
    if moved:
        notes.append(f"sizes {sz.fmt(moved)} override the problem's own ({sz.fmt({k: defaults.get(k) for k in moved})}): "
                     "its full size was not run")
    user: list[Planned] = []
    for i, c in enumerate(user_cases or []):
        name = str(c.get("name") or f"user_{i}")
        if c.get("shape") is not None and c.get("sizes") is None:
            raise TaskError("inputs", f"case {name}: a KernelBench problem builds its inputs from module-level sizes, "
                            f"so a case gives sizes, not shape: {{'name': {name!r}, 'sizes': {{...}}}} with sizes among "
                            f"{sz.fmt(defaults) or 'none'}", usage=True)
        over = sz.check_sizes(mod, c.get("sizes") or {}, where=f"case {name} sizes")
        user.append(Planned(name, sz.settle(mod, {**main.sizes, **over}, keep | set(over)), "user", optional=False,
                            why="your case", values=c.get("values"), hook=c.get("hook")))
    cases: list[Planned] = [] if replace else [main]
    if not replace:
        base = main
        if device == "cuda":
            medium = sz.shrink(mod, main.sizes, vary, sz.GPU_MEDIUM_ELEMS, sz.GPU_MEDIUM_DIM, keep=keep,
                               keep_ratio=ratio)
            if medium != main.sizes:
                base = Planned("medium", medium)
                cases.append(base)
        cases.append(Planned(base.name, base.sizes, "layout", tier=tier_of("layouts", require), robust="layouts",
                             why="get_inputs() builds contiguous tensors; other layouts test robustness"))
        odd = sz.oddify(base.sizes, every)
        changed = [k for k in every if odd[k] != base.sizes[k]]
        # When the reference refuses one odd size (GroupNorm's groups must divide the channels), every other size
        # stays odd before one size alone is tried (issue 40's trial: odd_batch_size left H and W even)
        but = [Planned(f"odd_but_{k}", sz.oddify(base.sizes, [j for j in changed if j != k])) for k in changed] \
            if len(changed) > 2 else []
        cases.append(Planned("odd", odd, fallbacks=but + [Planned(f"odd_{k}", sz.oddify(base.sizes, [k]))
                                                          for k in changed]))
        small = sz.shrink(mod, main.sizes, every, sz.SMALL_ELEMS, sz.SMALL_DIM, floor=2, keep=keep, keep_ratio=ratio)
        cases.append(Planned("small", small))
        if device != "cuda":  # the shrunk main case may sit inside one tile: this one is sized from the launches
            cases.append(Planned("tiles", dict(small), grow="tiles", why="at least two of the candidate's own "
                                 "blocks (and groups) in each tiled size, read from its launches"))
        # One long odd dimension at a time, the others small: a grid or loop that stops at whole blocks only shows
        # past the first block, and shrunk sizes fit in one (bmm's M // 64 grid passed at m=32 on the interpreter).
        for k in every:
            if start[k] >= sz.LONG_FROM:
                long = min(sz.LONG_DIM, start[k])
                cases.append(Planned(f"long_{k}", {**small, k: long - 1 if long % 2 == 0 else long}, holds=[k]))
        if every:
            cases.append(Planned("single", {**small, **{k: 1 for k in every}},
                                 fallbacks=[Planned(f"single_{every[0]}", {**small, every[0]: 1})]))
            cases.append(Planned("zero", {**small, every[0]: 0}, tier=tier_of("empty", require), robust="empty",
                                 why="an empty dim the problem never produces (robustness unless required)"))
        cases.append(Planned("extreme", base.sizes, "extreme", tier=tier_of("extreme", require), robust="extreme",
                             why="inputs scaled to |x| ~ 1e4, which get_inputs() never draws (robustness unless "
                             "required)"))
        cases.append(Planned("nan_inf", base.sizes, "nan_inf", tier=tier_of("nan", require), robust="nan",
                             why="NaN/inf values get_inputs() never draws (robustness unless required)"))
        for c in cases:  # derived sizes follow, and a variant the reference rejects gets a repaired try first
            _keep_invariants(mod, c, rels, keep)
        notes.extend(_keep_multiplicity(cases, defaults, pinned, every))
        seen: list[dict[str, int]] = []
        kept = []
        for c in cases:  # a size variant equal to an earlier case adds nothing
            if c.kind in ("main", "size") and not c.grow:
                if c.sizes in seen:
                    continue
                seen.append(c.sizes)
            kept.append(c)
        cases = kept
    cases += user
    if not cases:
        raise TaskError("inputs", "no cases to run: replace_cases=true needs at least one entry in cases", usage=True)
    if only:
        names = {n for c in cases for n in labels(c)}
        unknown = set(only) - names - set(LAYOUTS)
        if unknown:
            raise TaskError("inputs", f"only_cases names {sorted(unknown)} not among {sorted(names)}", usage=True)
        kept = []
        for c in cases:
            if c.kind == "layout":
                c.layouts = [lay for lay in LAYOUTS if lay in only or f"{c.name}:{lay}" in only]
                if c.layouts:
                    kept.append(c)
            elif c.name in only:
                kept.append(c)
        cases = kept
    return Plan(defaults, pinned, main, cases, full_size_run=full and any(c.kind == "main" for c in cases),
                notes=notes, start=start, rels=rels, keep=keep)


def _keep_multiplicity(cases: list[Planned], defaults: dict[str, int], pinned: dict[str, int],
                       every: list[str]) -> list[str]:
    """Every contract size case keeps each repeated size at its multiplicity floor (sizes.multiplicity_floor: 2
    stays 2, 3 or more stays >= 3), checked here before anything runs; a size below it is lifted (with its
    fallbacks). `single` is the deliberate exception: every size 1 at once, an edge of its own. A size the user
    pinned below its floor stays, with a note that says what it hides."""
    for c in cases:
        if c.tier != CONTRACT or c.kind not in ("main", "size") or c.name.startswith("single"):
            continue
        for option in [c, *c.fallbacks]:
            low = {k: v for k, v in sz.below_floor(defaults, option.sizes, every).items() if k not in pinned}
            option.sizes = {**option.sizes, **low}
    low = sz.below_floor(defaults, pinned)
    if not low:
        return []
    return [f"sizes {sz.fmt({k: pinned[k] for k in low})} pin below what the problem repeats "
            f"({sz.fmt({k: defaults[k] for k in low})}): a kernel that gives every head/group/batch element the "
            f"first one's offset passes there; pin at least {sz.fmt(low)} to check it"]


def main_sizes(mod: ModuleType, device: str, sizes: dict[str, Any] | None) -> tuple[dict[str, int], list[str]]:
    """The sizes of plan()'s main case and what the report says about them: the problem's own on a GPU, shrunk
    for the interpreter on the CPU (`sizes` pinned on top either way). audit_kernel's probes run there too."""
    defaults = sz.size_constants(mod)
    pinned = sz.check_sizes(mod, sizes)
    start = {**defaults, **pinned}
    vary = sz.varied(defaults, pinned, sz.derived(mod))
    notes: list[str] = []
    main = _main_case(mod, device, start, pinned, vary, set(pinned),
                      sz.ratios(mod, start, sz.varied(defaults, {}, sz.derived(mod))), notes)
    return dict(main.sizes), notes


def _main_case(mod: ModuleType, device: str, start: dict[str, int], pinned: dict[str, int], vary: list[str],
               keep: set[str], ratio: dict[str, str], notes: list[str]) -> Planned:
    """The main case: the full size on a GPU, shrunk for the interpreter (notes say how) on the CPU."""
    if device == "cuda":
        main = Planned("full" if not pinned else "sized", start, "main", optional=False,
                       why="the problem's get_inputs() at its full size" if not pinned else "get_inputs() at your sizes")
    else:
        small_enough = _off_block(mod, start, sz.shrink(mod, start, vary, sz.CPU_MAX_ELEMS, sz.CPU_MAX_DIM,
                                                        keep=keep, keep_ratio=ratio), vary, keep, ratio)
        wide = {k: small_enough[k] for k in vary if small_enough[k] > sz.CPU_MAX_DIM}
        if wide:
            notes.append(f"shrinking left {sz.fmt(wide)} above {sz.CPU_MAX_DIM}: the reference rejects smaller "
                         "values on fake tensors; pass sizes=... (or [sizes] in the sidecar) to choose them")
        main = Planned("shrunk" if small_enough != start else ("full" if not pinned else "sized"), small_enough,
                       "main", optional=False, why="the problem's get_inputs(), shrunk for the interpreter")
        est = sz.footprint(mod, small_enough)[0]
        if est is not None and est > 16 * sz.CPU_MAX_ELEMS:
            why = ("get_inputs() reads no module-level sizes to shrink (its sizes are literals); run on a GPU"
                   if not vary else f"shrinking stopped at {sz.fmt(small_enough)} (the reference rejects smaller "
                   "sizes, or they reached 4); run on a GPU, or pass sizes=...")
            notes.append(f"the interpreter runs about {est:,} input + output elements here: slow (minutes). {why}")
        if small_enough != start:
            whose = "the problem's" if not pinned else "your sizes on top of the problem's:"
            notes.append(f"no GPU: validated at shrunk sizes {sz.fmt(small_enough)} instead of {whose} "
                         f"{sz.fmt(start)}; the full size was not run (the interpreter's cost is per operation). "
                         "Run on a GPU for the full size, or pass sizes=... to choose the sizes")
    return main


def _off_block(mod: ModuleType, start: dict[str, int], sizes: dict[str, int], vary: list[str], keep: set[str],
               ratio: dict[str, str]) -> dict[str, int]:
    """The shrunk main case with its largest size moved off a power of two (512 -> 385, 3/4 of it plus one), so it is
    never exactly one of the candidate's blocks and its tail is exercised by the main case too (issue 40: the KL
    problem's main case was one 512-wide block, tails were caught only by the odd variants). Kept as it is when the
    reference rejects the move (on fake tensors) or the size carries a structure (a head count, n_embd); only a size
    the shrink moved (a problem small enough runs as it is, a pinned size stays)."""
    free = [k for k in vary if k not in keep and k not in ratio and k not in ratio.values() and sizes[k] != start[k]]
    if not free:
        return sizes
    k = max(free, key=lambda name: sizes[name])
    v = sizes[k]
    if v < 64 or v & (v - 1):
        return sizes
    moved = sz.settle(mod, {**sizes, k: v * 3 // 4 + 1}, keep)
    return moved if sz.footprint(mod, moved)[1] is not False else sizes


def _keep_invariants(mod: ModuleType, c: Planned, rels: list[tuple[str, str, str]], keep: set[str]) -> None:
    """Derived sizes computed again for `c` and its fallbacks; an optional size variant that breaks a relation of
    the problem's own sizes (seq_len <= max_seqlen, n_head divides n_embd) gets the repaired sizes as its first
    fallback, tried when the reference rejects it as it is."""
    c.sizes = sz.settle(mod, c.sizes, keep)
    for f in c.fallbacks:
        f.sizes = sz.settle(mod, f.sizes, keep)
    if c.kind != "size" or not c.optional:
        return
    # The fewest relations first: order (seq_len <= max_seqlen), then divisibility (n_head | n_embd), then equality.
    # Some relations are chance (batch 8 == n_head 8), so each wider repair is only tried when the narrower one is
    # rejected too; the size a variant is about (long_seq_len: seq_len) never moves.
    tries: list[dict[str, int]] = []
    hold = keep | set(c.holds)
    for kinds in (("le",), ("le", "div"), ("le", "div", "eq")):
        fixed = sz.settle(mod, sz.repair(c.sizes, [r for r in rels if r[0] in kinds], hold), keep)
        if fixed != c.sizes and fixed not in tries:
            tries.append(fixed)
    c.fallbacks[:0] = [Planned(c.name, t, why=c.why + " (repaired to keep the relations among the problem's sizes)")
                       for t in tries]


def labels(c: Planned) -> list[str]:
    """The names a planned case runs under (a layout case: one per layout)."""
    return [f"{c.name}:{lay}" for lay in c.layouts] if c.kind == "layout" else [c.name]


def label(c: Planned) -> str:
    """One name for a planned case, for progress and findings."""
    return "/".join(labels(c))
