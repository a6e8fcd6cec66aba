"""KernelBench-form tasks: size constants and overrides, the automatic variants, and the checks that keep a
KernelBench validation honest (perturbed parameters, outputs too small for the tolerance, NaN/inf propagation).

A KernelBench problem keeps its sizes as module-level integers (`batch_size = 16`, `dim = 16384`) that
`get_inputs()` and `get_init_inputs()` read. Setting those module globals (and re-building both models when
`get_init_inputs()` changes with them) runs the unchanged problem at any size the reference accepts: shrunk
for Triton's CPU interpreter, odd, 1, 0, or whatever `sizes` / a case's `sizes` ask for.
See references/task-format.md, "Form (b): KernelBench".
"""

from __future__ import annotations

import contextlib
import inspect
import math
import re
import types
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

import torch

from . import case_log
from . import compare as cmp
from .errors_fmt import describe
from .roofline import nested_tensors as _tensors
from .tasks import Case, TaskError, dtype_from_name, dtype_name

if TYPE_CHECKING:
    from .tasks import Task
    from .validate import Validator

# The interpreter costs per operation and program: 64 Ki elements (inputs + outputs) keep an elementwise or
# reduction problem at a few seconds per case; the largest dimension stays <= 512 so BLOCK-sized loops still run.
CPU_MAX_ELEMS, CPU_MAX_DIM = 1 << 16, 512
# GPU: the full size runs first; layout and odd variants run on a medium copy (seconds, not minutes, and a
# fraction of the full size's memory), small/1/0 variants on a tiny one.
GPU_MEDIUM_ELEMS, GPU_MEDIUM_DIM = 1 << 22, 4096
SMALL_ELEMS, SMALL_DIM = 1 << 12, 64
VARY_MIN = 8  # constants below this are structure (a reduction axis, kernel_size 3, 3 input channels), not sizes
STRUCTURAL = re.compile(r"kernel|stride|pad|dilation|group|axis|eps", re.I)
NAN_POSITIONS, INF_POSITIONS = 3, 2
LAYOUTS = ("transposed", "strided")  # validate._noncontiguous_variants' names
SMALL_OUTPUT_FACTOR = 10.0  # max|ref| < 10 * atol: the absolute tolerance alone would pass a constant
SMALL_OUTPUT_MIN_ELEMS = 64


class CandidateInitError(Exception):
    """ModelNew(*get_init_inputs()) raised: the candidate's failure (data), not a usage error."""

    def __init__(self, exc: BaseException):
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.exc = exc


class ReferenceInitError(Exception):
    """Model(*get_init_inputs()) raised at some sizes."""

    def __init__(self, exc: BaseException):
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.exc = exc


# ---- size constants ------------------------------------------------------------------------------------------
def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _split_key(key: str) -> tuple[str, int | None]:
    m = re.fullmatch(r"([A-Za-z_]\w*)\[(\d+)\]", key)
    return (m.group(1), int(m.group(2))) if m else (key, None)


def _ints_of(name: str, value: Any) -> dict[str, int]:
    if _is_int(value):
        return {name: int(value)}
    if isinstance(value, (tuple, list)) and value and all(_is_int(e) for e in value):
        return {f"{name}[{i}]": int(e) for i, e in enumerate(value)}  # e.g. input_shape = (4096,)
    return {}


def _globals_read(mod: ModuleType, roots: list[Any]) -> list[str]:
    """Global names the code of `roots` reads, in order of first use, following the module's own helper functions
    and nested code (comprehensions, lambdas)."""
    order: list[str] = []
    seen: set[int] = set()

    def visit(code: types.CodeType) -> None:
        if id(code) in seen:
            return
        seen.add(id(code))
        for name in code.co_names:
            if name not in order:
                order.append(name)
        for name in code.co_names:  # helpers after the function's own names: get_inputs' order comes first
            obj = vars(mod).get(name)
            if inspect.isfunction(obj) and obj.__module__ == mod.__name__:
                visit(obj.__code__)
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                visit(c)

    for fn in roots:
        code = getattr(fn, "__code__", None)
        if isinstance(code, types.CodeType):
            visit(code)
    return order


def size_constants(mod: ModuleType) -> dict[str, int]:
    """The problem's sizes: module-level integers (and integer-tuple elements, as 'name[i]') that get_inputs() or
    get_init_inputs() read, found from their bytecode, in order of first use (batch_size before dim)."""
    roots = [getattr(mod, n) for n in ("get_inputs", "get_init_inputs") if callable(getattr(mod, n, None))]
    out: dict[str, int] = {}
    for name in _globals_read(mod, roots):
        if name in vars(mod) and not name.startswith("__"):
            out.update(_ints_of(name, vars(mod)[name]))
    return out


def module_ints(mod: ModuleType) -> dict[str, int]:
    """Every module-level integer (and integer-tuple element) of the problem: what `sizes` may override."""
    out: dict[str, int] = {}
    for name, value in vars(mod).items():
        if not name.startswith("_") and not isinstance(value, ModuleType):
            out.update(_ints_of(name, value))
    return out


def check_sizes(mod: ModuleType, sizes: dict[str, Any] | None, where: str = "sizes") -> dict[str, int]:
    """Validated overrides {name: int}; an unknown name or a bad value is a usage error naming the known sizes."""
    known, allowed = size_constants(mod), module_ints(mod)
    out: dict[str, int] = {}
    for name, value in (sizes or {}).items():
        if name not in allowed:
            others = sorted(set(allowed) - set(known))
            raise TaskError("inputs", f"{where}: {name!r} is not a size of this KernelBench problem; its sizes (module-"
                            f"level integers read by get_inputs/get_init_inputs) are {_fmt(known) or 'none'}"
                            + (f"; other module-level integers: {', '.join(others)}" if others else ""), usage=True)
        if not _is_int(value) and not (isinstance(value, str) and value.isdigit()):
            raise TaskError("inputs", f"{where}: {name} must be a non-negative integer, got {value!r}", usage=True)
        if int(value) < 0:
            raise TaskError("inputs", f"{where}: {name} must be a non-negative integer, got {value!r}", usage=True)
        out[name] = int(value)
    return out


def _fmt(sizes: dict[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


def _set_sizes(mod: ModuleType, originals: dict[str, Any], sizes: dict[str, int]) -> None:
    """Module globals back to their originals, then `sizes` on top (tuple elements rebuilt as tuples)."""
    for name, value in originals.items():
        setattr(mod, name, value)
    for key, value in sizes.items():
        name, idx = _split_key(key)
        if name not in originals:
            originals[name] = getattr(mod, name)
        if idx is None:
            setattr(mod, name, int(value))
        else:
            items = list(getattr(mod, name))
            items[idx] = int(value)
            setattr(mod, name, type(originals[name])(items) if isinstance(originals[name], list) else tuple(items))


@contextlib.contextmanager
def sized(mod: ModuleType, sizes: dict[str, int]) -> Iterator[None]:
    """Run with the problem's module-level sizes temporarily overridden (restored afterwards, also on errors)."""
    originals: dict[str, Any] = {}
    try:
        _set_sizes(mod, originals, sizes)
        yield
    finally:
        for name, value in originals.items():
            setattr(mod, name, value)


def footprint(mod: ModuleType, sizes: dict[str, int]) -> tuple[int | None, bool | None]:
    """(elements of inputs + outputs, whether the reference accepted these sizes) from fake tensors: nothing is
    allocated, so an 8 GB problem costs nothing. (None, None) when the inputs cannot be built fake; accepted is
    None when the reference cannot run on fake tensors at all."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with sized(mod, sizes):
        try:
            with FakeTensorMode(allow_non_fake_inputs=True), torch.no_grad():
                inputs = list(mod.get_inputs())
                n = sum(t.numel() for t in _tensors(inputs))
                try:
                    model = mod.Model(*list(getattr(mod, "get_init_inputs", list)()))
                    n += sum(t.numel() for t in _tensors(model(*inputs)))
                    return n, True
                except Exception:  # noqa: BLE001 - a shape the reference rejects, or an op with no fake kernel
                    return n, False
        except Exception:  # noqa: BLE001
            return None, None


# ---- automatic sizes -------------------------------------------------------------------------------------------
def varied(consts: dict[str, int], pinned: dict[str, int]) -> list[str]:
    """The constants the automatic sizes change: sizes (>= 8, not kernel/stride/padding/...), not pinned by the user."""
    return [k for k, v in consts.items() if v >= VARY_MIN and k not in pinned and not STRUCTURAL.search(_split_key(k)[0])]


def shrink(mod: ModuleType, start: dict[str, int], vary: list[str], max_elems: int, max_dim: int,
           floor: int = 4) -> dict[str, int]:
    """Halve the largest varied size until inputs + outputs fit `max_elems` and no varied size exceeds `max_dim`;
    a halving the reference rejects (on fake tensors) freezes that constant instead. Ratios stay roughly the same
    because the largest is always halved first, and get_init_inputs is re-read at every step."""
    cur = dict(start)
    est, ok0 = footprint(mod, cur)
    frozen: set[str] = set()
    for _ in range(256):
        free = [k for k in vary if k not in frozen and cur[k] > floor]
        too_wide = [k for k in free if cur[k] > max_dim]
        n = est if est is not None else math.prod(max(1, cur[k]) for k in vary)
        if not free or (n <= max_elems and not too_wide):
            break
        k = max(too_wide or free, key=lambda name: cur[name])
        trial = {**cur, k: max(floor, (cur[k] + 1) // 2)}
        t_est, t_ok = footprint(mod, trial)
        if ok0 and not t_ok:
            frozen.add(k)  # e.g. embed_dim no longer divisible by num_heads, or smaller than a kernel
            continue
        cur, est = trial, t_est
    return cur


LONG_FROM = 256  # sizes at least this big in the problem get a long_<size> variant
LONG_DIM = 333  # odd, over two blocks of 128 and not a multiple of any power of two


def oddify(sizes: dict[str, int], vary: list[str]) -> dict[str, int]:
    """Every varied size made odd (and so no power of two): 512 -> 511, 16 -> 15."""
    return {**sizes, **{k: sizes[k] - 1 for k in vary if sizes[k] > 2 and sizes[k] % 2 == 0}}


@dataclass
class Planned:
    """One KernelBench case to run: a name (what only_cases matches), the sizes, and how to run it."""

    name: str
    sizes: dict[str, int]
    kind: str = "size"  # main | size | user | layout | nan_inf
    optional: bool = True  # a variant the reference rejects is skipped with a note
    fallbacks: list[Planned] = field(default_factory=list)  # tried, in order, when the reference rejects this one
    layouts: list[str] = field(default_factory=lambda: list(LAYOUTS))  # kind "layout": which ones run


@dataclass
class Plan:
    """Everything the KernelBench validation runs, and what the report says about its sizes."""

    defaults: dict[str, int]
    pinned: dict[str, int]
    main: Planned
    cases: list[Planned]
    full_size_run: bool
    notes: list[str] = field(default_factory=list)


def plan(mod: ModuleType, device: str, sizes: dict[str, Any] | None, user_cases: list[dict[str, Any]] | None,
         replace: bool = False, only: list[str] | None = None) -> Plan:
    """The cases of a KernelBench validation: the full size on a GPU (shrunk under the interpreter), then layout,
    odd, small, 1, 0 and NaN/inf variants, then the user's cases (size overrides on top of the main case)."""
    defaults = size_constants(mod)
    pinned = check_sizes(mod, sizes)
    start = {**defaults, **pinned}
    vary = varied(defaults, pinned)  # what shrinking may change: the main case keeps the sizes you pinned
    every = varied(defaults, {})  # what the edge variants change: every size, pinned or not
    notes: list[str] = []
    if device == "cuda":
        main = Planned("full" if not pinned else "sized", start, "main", optional=False)
    else:
        small_enough = shrink(mod, start, vary, CPU_MAX_ELEMS, CPU_MAX_DIM)
        main = Planned("shrunk" if small_enough != start else ("full" if not pinned else "sized"), small_enough,
                       "main", optional=False)
        est = footprint(mod, small_enough)[0]
        if est is not None and est > 16 * CPU_MAX_ELEMS:
            why = ("get_inputs() reads no module-level sizes to shrink (its sizes are literals); run on a GPU"
                   if not vary else f"shrinking stopped at {_fmt(small_enough)} (the reference rejects smaller "
                   "sizes, or they reached 4); run on a GPU, or pass sizes=...")
            notes.append(f"the interpreter runs about {est:,} input + output elements here: slow (minutes). {why}")
        if small_enough != start:
            notes.append(f"no GPU: validated at shrunk sizes {_fmt(small_enough)} instead of the problem's "
                         f"{_fmt(start)}; the full size was not run (the interpreter's cost is per operation). "
                         "Run on a GPU for the full size, or pass sizes=... to choose the sizes")
    full = main.sizes == {**defaults, **pinned} and not pinned
    if pinned:
        notes.append(f"sizes {_fmt(pinned)} override the problem's own ({_fmt({k: defaults.get(k) for k in pinned})}): "
                     "its full size was not run")
    user: list[Planned] = []
    for i, c in enumerate(user_cases or []):
        name = str(c.get("name") or f"user_{i}")
        if c.get("shape") is not None and c.get("sizes") is None:
            raise TaskError("inputs", f"case {name}: a KernelBench problem builds its inputs from module-level sizes, "
                            f"so a case gives sizes, not shape: {{'name': {name!r}, 'sizes': {{...}}}} with sizes among "
                            f"{_fmt(defaults) or 'none'}", usage=True)
        over = check_sizes(mod, c.get("sizes") or {}, where=f"case {name} sizes")
        user.append(Planned(name, {**main.sizes, **over}, "user", optional=False))
    cases: list[Planned] = [] if replace else [main]
    if not replace:
        base = main
        if device == "cuda":
            medium = shrink(mod, main.sizes, vary, GPU_MEDIUM_ELEMS, GPU_MEDIUM_DIM)
            if medium != main.sizes:
                base = Planned("medium", medium)
                cases.append(base)
        cases.append(Planned(base.name, base.sizes, "layout"))
        odd = oddify(base.sizes, every)
        cases.append(Planned("odd", odd, fallbacks=[Planned(f"odd_{k}", oddify(base.sizes, [k])) for k in every
                                                    if odd[k] != base.sizes[k]]))
        small = shrink(mod, main.sizes, every, SMALL_ELEMS, SMALL_DIM, floor=2)
        cases.append(Planned("small", small))
        # One long odd dimension at a time, the others small: a grid or loop that stops at whole blocks only shows
        # past the first block, and shrunk sizes fit in one (bmm's M // 64 grid passed at m=32 on the interpreter).
        for k in every:
            if start[k] >= LONG_FROM:
                long = min(LONG_DIM, start[k])
                cases.append(Planned(f"long_{k}", {**small, k: long - 1 if long % 2 == 0 else long}))
        if every:
            cases.append(Planned("single", {**small, **{k: 1 for k in every}},
                                 fallbacks=[Planned(f"single_{every[0]}", {**small, every[0]: 1})]))
            cases.append(Planned("zero", {**small, every[0]: 0}))
        cases.append(Planned("nan_inf", base.sizes, "nan_inf"))
        seen: list[dict[str, int]] = []
        kept = []
        for c in cases:  # a size variant equal to an earlier case adds nothing
            if c.kind in ("main", "size"):
                if c.sizes in seen:
                    continue
                seen.append(c.sizes)
            kept.append(c)
        cases = kept
    cases += user
    if not cases:
        raise TaskError("inputs", "no cases to run: replace_cases=true needs at least one entry in cases", usage=True)
    if only:
        names = {n for c in cases for n in _labels(c)}
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
                notes=notes)


def _labels(c: Planned) -> list[str]:
    return [f"{c.name}:{lay}" for lay in c.layouts] if c.kind == "layout" else [c.name]


def _label(c: Planned) -> str:
    return "/".join(_labels(c))


# ---- models at a set of sizes ----------------------------------------------------------------------------------
def _in_fake_mode() -> bool:
    try:
        return torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE) is not None
    except AttributeError:  # pragma: no cover - older torch
        return False


def _fingerprint(init: list[Any]) -> str:
    def one(x: Any) -> str:
        if isinstance(x, torch.Tensor):
            return f"T{tuple(x.shape)}{x.dtype}{hash(x.detach().cpu().numpy().tobytes()) if x.numel() < 4096 else ''}"
        if isinstance(x, (list, tuple)):
            return "(" + ",".join(one(v) for v in x) + ")"
        return repr(x)

    return one(list(init))


def perturb(model: Any, seed: int) -> int:
    """Seeded noise on every floating parameter and buffer (in place): a constant tensor (LayerNorm's weight 1 and
    bias 0, BatchNorm's running stats) moves by 0.1 * max(1, |value|) * N(0, 1); a random one by 10% of its mean
    magnitude; an all-positive one (variances, scales) is scaled by exp(0.1 N(0, 1)) so it stays positive.
    Returns the number of tensors changed."""
    n = 0
    with torch.no_grad():
        for name, t in model.state_dict(keep_vars=True).items():
            if not isinstance(t, torch.Tensor) or not t.is_floating_point() or t.numel() == 0:
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


@dataclass
class KernelBenchState:
    """The problem's module, the candidate's, and the models built for the sizes (and dtype) now in effect."""

    ref_mod: ModuleType
    cand_mod: ModuleType | None
    device: str
    seed: int = 0
    cast: bool = False  # dtypes were asked for explicitly: floating inputs and parameters are cast to them
    perturb: bool = True  # run_benchmark turns it off: its baseline task has no candidate to sync with
    originals: dict[str, Any] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    key: tuple[str, str] | None = None
    parameters: str = "not built yet"
    notes: list[str] = field(default_factory=list)

    def set_sizes(self, sizes: dict[str, int]) -> None:
        """Module globals at `sizes` (the problem's own values for the others) until the next call."""
        _set_sizes(self.ref_mod, self.originals, sizes)
        self.sizes = dict(sizes)

    def restore(self) -> None:
        """The module's own sizes again."""
        _set_sizes(self.ref_mod, self.originals, {})
        self.sizes = {}

    def prepare(self, task: Task, sizes: dict[str, int], dtype: torch.dtype | None = None) -> None:
        """Sizes in effect, and both models built for them (only when get_init_inputs or the dtype changed):
        the same seed for both, the reference's parameters perturbed and loaded into the candidate."""
        self.set_sizes(sizes)
        init = list(getattr(self.ref_mod, "get_init_inputs", list)())
        dt = dtype if self.cast and dtype is not None and dtype.is_floating_point else None
        key = (_fingerprint(init), str(dt))
        if key == self.key and task.ref_fn is not None:
            return
        task.ref_fn = task.ref_model = task.cand_fn = None  # the previous size's models go before new ones are made
        # Built on the host, then moved (as KernelBench does): an __init__ may use numpy or CPU-only tensors.
        try:
            torch.manual_seed(0)
            ref = self.ref_mod.Model(*init).to(self.device)
        except Exception as e:  # noqa: BLE001
            raise ReferenceInitError(e) from e
        cand = None
        if self.cand_mod is not None:
            try:
                torch.manual_seed(0)
                cand = self.cand_mod.ModelNew(*init)
                cand = cand.to(self.device) if hasattr(cand, "to") else cand
            except Exception as e:  # noqa: BLE001
                raise CandidateInitError(e) from e
        self.parameters = self._sync(ref, cand)
        if dt is not None:
            ref = ref.to(dt)
            cand = cand.to(dt) if cand is not None and hasattr(cand, "to") else cand
        task.ref_fn = task.ref_model = ref
        task.cand_fn = cand
        self.key = key

    def _sync(self, ref: Any, cand: Any) -> str:
        """Perturb the reference's parameters and load them into the candidate; say what happened."""
        rsd = ref.state_dict() if hasattr(ref, "state_dict") else {}
        if not any(isinstance(t, torch.Tensor) and t.is_floating_point() for t in rsd.values()):
            return "none (the model has no floating parameters or buffers)"
        if not self.perturb:
            if cand is not None and hasattr(cand, "state_dict") and set(cand.state_dict()) == set(rsd):
                with contextlib.suppress(RuntimeError):  # other shapes: both keep their seeded initialization
                    cand.load_state_dict(rsd)
            return "seeded initialization (not perturbed)"
        if cand is None:
            n = perturb(ref, self.seed)
            return f"perturbed ({n} tensors, seeded noise)"
        csd = cand.state_dict() if hasattr(cand, "state_dict") else None
        if csd is None or set(rsd) != set(csd):
            only_ref = sorted(set(rsd) - set(csd or {}))[:6]
            only_cand = sorted(set(csd or {}) - set(rsd))[:6]
            self._note(f"parameters not synced or perturbed: the state_dict keys of Model and ModelNew differ (only in "
                       f"Model: {only_ref}, only in ModelNew: {only_cand}); both keep their seeded initialization, so "
                       "identity weights (e.g. LayerNorm's 1 and 0) may hide bugs. Name ModelNew's parameters like "
                       "Model's to get them checked")
            return "not synced (state_dict keys differ)"
        bad = [k for k in rsd if isinstance(rsd[k], torch.Tensor) and isinstance(csd[k], torch.Tensor)
               and rsd[k].shape != csd[k].shape]
        if bad:
            self._note(f"parameters not synced or perturbed: ModelNew's {bad[:4]} have other shapes than Model's; both "
                       "keep their seeded initialization")
            return "not synced (parameter shapes differ)"
        n = perturb(ref, self.seed)
        cand.load_state_dict(ref.state_dict())
        return f"perturbed ({n} tensors, seeded noise), the same values loaded into ModelNew"

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def make_inputs(self, task: Task, case: Case) -> list[Any]:
        """get_inputs() at the case's sizes (its `shape` is a sizes dict) under the case's seed, on its device."""
        sizes = dict(case.shape) if isinstance(case.shape, dict) else dict(self.sizes)
        if case.device == "meta" or _in_fake_mode():
            self.set_sizes(sizes)  # an estimate: the models are built when the case really runs
        else:
            self.prepare(task, sizes, case.dtype)
        torch.manual_seed(case.seed)
        # Generated on the device itself on a GPU: 8 GB of torch.randn on the host would take most of a minute.
        try:
            with torch.device(case.device) if case.device in ("cuda", "meta") else contextlib.nullcontext():
                raw = list(self.ref_mod.get_inputs())
        except Exception as e:  # noqa: BLE001 - e.g. a get_inputs that needs host tensors (numpy): drawn on the host
            if case.device not in ("cuda", "meta") or isinstance(e, (torch.OutOfMemoryError, MemoryError)):
                raise
            torch.manual_seed(case.seed)
            raw = list(self.ref_mod.get_inputs())
        out = []
        for x in raw:
            if isinstance(x, torch.Tensor):
                x = x.to(case.device)
                if self.cast and x.is_floating_point() and case.dtype.is_floating_point and x.dtype != case.dtype:
                    x = x.to(case.dtype)
            out.append(x)
        return out


def native_dtype(task: Task, sizes: dict[str, int]) -> torch.dtype:
    """The dtype of the problem's first floating input (what the report labels a case with), from fake tensors."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with sized(task.ref_mod, sizes):
        try:
            with FakeTensorMode(allow_non_fake_inputs=True):
                for t in _tensors(list(task.ref_mod.get_inputs())):
                    if t.is_floating_point():
                        return t.dtype
        except Exception:  # noqa: BLE001
            pass
    return torch.float32


# ---- the validation of a KernelBench task ---------------------------------------------------------------------
def _seed(args: dict[str, Any], name: str, dtype: torch.dtype, trial: int = 0) -> int:
    # The same formula as Validator.run_case, so the layout and NaN variants start from the inputs of trial 0.
    return (int(args.get("seed", 0)) * 1_000_003 + zlib.crc32(f"{name}:{dtype}".encode()) + trial) % 2**31


def validate_cases(v: Validator, task: Task, args: dict[str, Any], emit: Any,
                   report: dict[str, Any]) -> list[tuple[str, Any, torch.dtype, float]]:
    """Run every planned KernelBench case into v.cases; fill the report's KernelBench fields. Returns the main case
    per dtype, (name, sizes, dtype, 1.0), for the gradient check."""
    from .validate import _noncontiguous_variants

    kb = task.kb
    assert kb is not None
    kb.seed = int(args.get("seed", 0))
    p = plan(task.ref_mod, v.device, args.get("sizes"), args.get("cases"), bool(args.get("replace_cases")),
             args.get("only_cases"))
    v.notes.extend(p.notes)
    if args.get("dtypes"):
        kb.cast = True
        dts = [dtype_from_name(d) for d in args["dtypes"]]
    else:
        dts = [native_dtype(task, p.main.sizes)]
    for c in args.get("cases") or []:
        if c.get("scale") not in (None, 1, 1.0):
            v.notes.append(f"case {c.get('name')}: scale is ignored for a KernelBench problem (get_inputs draws the "
                           "values)")
    trials = max(1, int(args.get("trials", 3)))
    ran: dict[str, Any] = {}
    total = len(dts) * sum(trials if c.kind in ("main", "size", "user") else 2 for c in p.cases)
    done = 0
    checks = {"parameters": "", "small_outputs": f"checked: max|reference| < {SMALL_OUTPUT_FACTOR:g} x atol adds a "
                                                 "warning and a relative-error check", "nan_inf": "not run"}
    state: dict[str, Any] = {}
    for dtype in dts:
        for c in p.cases:
            done += trials if c.kind in ("main", "size", "user") else 2
            emit("progress", message=f"{report['candidate']}: {_label(c)} {dtype_name(dtype)} ({_fmt(c.sizes)})",
                 progress=done, total=total)
            try:
                if c.kind == "layout":
                    task.kb.prepare(task, c.sizes, dtype)
                    base = task.make_inputs(Case(c.name, dict(c.sizes), dtype, v.device, _seed(args, c.name, dtype)))
                    variants = _noncontiguous_variants(base)
                    del base
                    for variant in [lay for lay in c.layouts if lay in variants]:
                        # pop: each variant's inputs are freed once it has run
                        rec = v.run_case(task, c.name, dict(c.sizes), dtype, 1.0, 0, inputs=variants.pop(variant),
                                         variant=variant)
                        v.cases.append({**rec, "sizes": dict(c.sizes)})
                    continue
                if c.kind == "nan_inf":
                    checks["nan_inf"] = nan_inf_check(v, task, args, c, dtype)
                    continue
                chosen = _accepted(v, task, args, c, dtype)
                if chosen is None:
                    continue
                ran[chosen.name] = dict(chosen.sizes)
                task.kb.prepare(task, chosen.sizes, dtype)  # models at these sizes before the memory estimate
                for trial in range(trials):
                    try:
                        rec = v.run_case(task, chosen.name, dict(chosen.sizes), dtype, 1.0, trial, state=state)
                    except TaskError:
                        if not chosen.optional:
                            raise
                        v.notes.append(f"reference rejects the {chosen.name} variant ({_fmt(chosen.sizes)}) at trial "
                                       f"{trial}; skipped")
                        break
                    rec["sizes"] = dict(chosen.sizes)
                    v.cases.append(rec)
                    if not rec["ok"]:
                        break
            except CandidateInitError as e:
                err = describe(e.exc, "run", v.user_dirs)
                v.find("exception", _label(c), f"ModelNew(*get_init_inputs()) raised {err['type']}: "
                       f"{err['message'][:300]} (sizes {_fmt(c.sizes)})", err)
                v.cases.append({"name": _label(c), "dtype": dtype_name(dtype), "ok": False, "sizes": dict(c.sizes),
                                "error": err})
            except ReferenceInitError as e:
                if not c.optional:
                    raise TaskError("reference", f"Model(*get_init_inputs()) raised at sizes {_fmt(c.sizes)}: {e}; pass "
                                    "sizes=... the reference accepts", usage=True) from e
                v.notes.append(f"reference Model rejects the {c.name} sizes ({_fmt(c.sizes)}): {e}; skipped")
    checks["parameters"] = kb.parameters
    v.notes.extend(n for n in kb.notes if n not in v.notes)
    kb.restore()
    report["full_size_run"] = p.full_size_run
    report["sizes_used"] = dict(p.main.sizes)
    report["kernelbench"] = {"size_constants": p.defaults, "sizes_pinned": p.pinned, "main_case": p.main.name,
                             "full_size_run": p.full_size_run, "cases_sizes": ran, "checks": checks,
                             "automatic_variants": not bool(args.get("replace_cases"))}
    return [(p.main.name, dict(p.main.sizes), d, 1.0) for d in dts]


def _accepted(v: Validator, task: Task, args: dict[str, Any], c: Planned, dtype: torch.dtype) -> Planned | None:
    """`c`, or its first fallback the reference accepts (it runs once on the variant's inputs); None if none."""
    if not c.optional:
        return c
    tried = []
    for option in [c, *c.fallbacks]:
        if option.name in v.log.reference_crashed:  # an earlier worker died in this probe (case_log.py)
            tried.append(f"{option.name} ({_fmt(option.sizes)}): the reference crashed the worker")
            continue
        try:
            v.log.phase(case_log.key(option.name, dtype_name(dtype), 0), option.name, "reference")
            task.kb.prepare(task, option.sizes, dtype)
            inputs = task.make_inputs(Case(option.name, dict(option.sizes), dtype, v.device,
                                           _seed(args, option.name, dtype)))
            with torch.no_grad():
                task.ref_fn(*inputs)
            if tried:
                v.notes.append(f"reference rejects the {c.name} variant ({tried[0]}); ran {option.name} "
                               f"({_fmt(option.sizes)}) instead")
            return option
        except CandidateInitError:
            raise
        except Exception as e:  # noqa: BLE001 - the reference's refusal decides: skipped with a note
            v.log.check(e, option.name, "reference")  # a device-side assert: this worker must go (harness fault)
            tried.append(f"{option.name} ({_fmt(option.sizes)}): {type(e).__name__}: {str(e)[:120]}")
    v.notes.append(f"reference rejects the {c.name} variant; skipped: " + "; ".join(tried[:3]))
    return None


def nan_inf_check(v: Validator, task: Task, args: dict[str, Any], c: Planned, dtype: torch.dtype) -> str:
    """NaN and +-inf put into the first floating input: where the reference's output is non-finite, the candidate's
    must be too (and where it is finite, close). Skipped, with a note, when the reference does not propagate."""
    from .validate import FLOAT_POISON_B, _flatten

    task.kb.prepare(task, c.sizes, dtype)
    inputs = task.make_inputs(Case(c.name, dict(c.sizes), dtype, v.device, _seed(args, c.name, dtype)))
    idx = next((i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.is_floating_point()
                and x.numel() >= NAN_POSITIONS + INF_POSITIONS), None)
    if idx is None:
        return "skipped: no floating input large enough to hold NaN/inf"
    x = inputs[idx].clone()
    g = torch.Generator(device="cpu").manual_seed(_seed(args, "nan_inf", dtype))
    pos = torch.randperm(x.numel(), generator=g)[:NAN_POSITIONS + INF_POSITIONS].to(x.device)
    flat = x.view(-1)
    flat[pos[:NAN_POSITIONS]] = float("nan")
    flat[pos[NAN_POSITIONS:NAN_POSITIONS + 1]] = float("inf")
    flat[pos[NAN_POSITIONS + 1:]] = float("-inf")
    inputs = [x if i == idx else a for i, a in enumerate(inputs)]
    label = "nan_inf"
    try:
        ref_out = v._reference(task.ref_fn, [a.clone() if isinstance(a, torch.Tensor) else a for a in inputs])
    except Exception as e:  # noqa: BLE001
        v.notes.append(f"NaN/inf check skipped: the reference raises on NaN/inf inputs ({type(e).__name__})")
        return "skipped: the reference raises on NaN/inf inputs"
    refs = [r for r in _flatten(ref_out)]
    if not any(isinstance(r, torch.Tensor) and r.is_floating_point() and not bool(torch.isfinite(r).all())
               for r in refs):
        v.notes.append(f"NaN/inf check skipped: the reference's output stays finite with NaN/inf in input {idx} (it "
                       "does not propagate them)")
        return f"skipped: the reference does not propagate NaN/inf from input {idx}"
    rec: dict[str, Any] = {"name": label, "dtype": dtype_name(dtype), "trial": 0, "ok": False, "sizes": dict(c.sizes),
                           "shape": [list(t.shape) for t in _tensors(inputs)], "nan_inf_input": idx}
    try:
        # Finite poison: an element the candidate never writes must not pass for a propagated NaN.
        out, ev, _ = v._candidate(task.cand_fn, [a.clone() if isinstance(a, torch.Tensor) else a for a in inputs],
                                  FLOAT_POISON_B, 3, label)
    except Exception as e:  # noqa: BLE001 - the candidate's failure is data
        err = describe(e, "run", v.user_dirs)
        v.find("exception", label, f"{err['type']} on NaN/inf inputs: {err['message'][:300]}", err)
        rec["error"] = err
        v.cases.append(rec)
        return "ran: the candidate raised"
    outs = _flatten(out)
    ok = len(outs) == len(refs)
    missing_total = spurious_total = 0
    for i, (r, o) in enumerate(zip(refs, outs)):
        if not (isinstance(r, torch.Tensor) and r.is_floating_point() and isinstance(o, torch.Tensor)
                and o.shape == r.shape):
            continue
        o = o.to(r.device)
        r_nf, o_nf = ~torch.isfinite(r), ~torch.isfinite(o)
        missing, spurious = r_nf & ~o_nf, o_nf & ~r_nf
        n_miss, n_spur = int(missing.sum()), int(spurious.sum())
        missing_total += n_miss
        spurious_total += n_spur
        if n_miss:
            first = cmp._index(int(torch.nonzero(missing.reshape(-1))[0]), tuple(r.shape))
            got = float(o.reshape(-1)[int(torch.nonzero(missing.reshape(-1))[0])])
            v.find("nan_propagation", label, f"output {i}: the reference is NaN/inf at {n_miss} of {int(r_nf.sum())} "
                   f"positions (NaN/inf put into input {idx}) where the candidate is finite; first at index {first} "
                   f"(got {got:g})", {"first_index": first, "count": n_miss, "input": idx})
            ok = False
        if n_spur:
            first = cmp._index(int(torch.nonzero(spurious.reshape(-1))[0]), tuple(r.shape))
            v.find("nan_propagation", label, f"output {i}: the candidate is NaN/inf at {n_spur} positions where the "
                   f"reference is finite (NaN/inf put into input {idx}); first at index {first}: the NaN reaches "
                   "elements it should not (reads outside the row/tile?)", {"first_index": first, "count": n_spur})
            ok = False
        both = torch.isfinite(r) & torch.isfinite(o)
        rtol, atol = cmp.tolerance_for(r.dtype, v.args.get("tolerances_merged"), v.case)
        m = cmp.compare(torch.where(both, o, torch.zeros_like(o)), torch.where(both, r, torch.zeros_like(r)),
                        max(rtol, 1e-3) * 4, max(atol, 1e-3) * 4)
        if not m["ok"]:
            v.find("nan_propagation", label, f"output {i}: with NaN/inf in input {idx}, {m['mismatches']} finite "
                   f"elements differ from the reference (max abs err {m['max_abs_err']:.3g})", m["worst"][:3])
            ok = False
    rec.update(ok=ok, launches=ev.launches, nonfinite_missing=missing_total, nonfinite_spurious=spurious_total)
    v.cases.append(rec)
    return f"ran: NaN/inf in input {idx}, " + ("propagated like the reference" if ok else "not propagated like the "
                                                "reference")


def _finite_amax(t: torch.Tensor) -> float:
    """max |t| over its finite elements, in bounded slices (a full-size float64 output must not be copied)."""
    flat, best = t.detach().reshape(-1), 0.0
    step = int(getattr(cmp, "CHUNK_ELEMS", 1 << 24))
    for s in range(0, flat.numel(), step):
        c = flat[s:s + step].abs()
        c = c[torch.isfinite(c)]
        if c.numel():
            best = max(best, float(c.max()))
    return best


def check_small_outputs(v: Validator, label: str, where: str, out: torch.Tensor, expected: torch.Tensor,
                        native_err: float | None, rtol: float, atol: float, m: dict[str, Any]) -> bool:
    """Outputs so small that atol alone passes a constant: warn, and check the error relative to the outputs'
    own scale, allowing 10x PyTorch's own error vs float64 (`native_err`; cancellation can make it large).
    Without a float64 reference there is no such yardstick: only the warning. False on failure."""
    if not out.is_floating_point() or out.numel() < SMALL_OUTPUT_MIN_ELEMS or atol <= 0:
        return True  # a handful of outputs (the single variant) is small by chance, not by the problem's design
    amax = _finite_amax(expected)
    if amax >= SMALL_OUTPUT_FACTOR * atol:
        return True
    tight = max(rtol * amax, 10.0 * (native_err or 0.0))
    v.find("small_outputs", label, f"{where}: max |reference| is {amax:.3g}, under {SMALL_OUTPUT_FACTOR:g} x atol "
           f"({atol:g}): the absolute tolerance alone would pass a constant; also checked against atol={tight:.3g} "
           "(rtol x max|reference|)", {"max_abs_reference": amax, "atol": atol, "relative_atol": tight},
           severity="warn")
    m["small_outputs_atol"] = tight
    if native_err is None or tight >= atol:
        return True  # no float64 yardstick, or PyTorch's own error is that large: a tighter check means nothing
    r = cmp.compare(out, expected, rtol, tight)
    if not r["ok"]:
        v.find("relative_mismatch", label, f"{where}: {r['mismatches']} of {r['numel']} elements off by more than "
               f"{tight:.3g} (rtol x max|reference|; max abs err {r['max_abs_err']:.3g} against outputs of at most "
               f"{amax:.3g})", {"worst": r["worst"]})
        return False
    return True


# ---- run_benchmark ---------------------------------------------------------------------------------------------
def bench_specs(task: Task, args: dict[str, Any]) -> list[tuple[str, dict[str, int], float | None]]:
    """(name, sizes, sweep x) to time: the problem's sizes with `sizes` on top ("full" or "sized"), each case's
    sizes on top of those, or a sweep of one size ({'param': 'dim', 'values': [...]})."""
    main = {**size_constants(task.ref_mod), **check_sizes(task.ref_mod, args.get("sizes"))}
    sweep = args.get("sweep")
    if sweep:
        param = str(sweep["param"])
        check_sizes(task.ref_mod, {param: 0}, where="sweep param")
        return [(f"{param}={v}", {**main, param: int(v)}, float(v)) for v in sweep["values"]]
    if args.get("cases"):
        out = []
        for i, c in enumerate(args["cases"]):
            name = str(c.get("name") or f"case{i}")
            if c.get("sizes") is None:
                raise TaskError("inputs", f"case {name}: a KernelBench problem takes cases as size overrides, e.g. "
                                f"{{'name': {name!r}, 'sizes': {{...}}}} with sizes among {_fmt(main)}", usage=True)
            out.append((name, {**main, **check_sizes(task.ref_mod, c["sizes"], where=f"case {name} sizes")}, None))
        return out
    return [("sized" if args.get("sizes") else "full", main, None)]


def bench_setup(base: Task, cand_tasks: list[tuple[str, Any]], specs: list[tuple[str, Any, Any]],
                args: dict[str, Any], dtype: torch.dtype) -> torch.dtype:
    """Set every task up for timing and return the dtype to time in: an explicit dtype casts inputs and parameters,
    else the problem's own. No perturbation: the baseline's model has no candidate beside it, so a ModelNew whose
    parameters cannot be synced would differ from it (run_validation perturbs; the timing check needs equal models)."""
    cast = bool(args.get("dtype"))
    for t in [base] + [t for _, t in cand_tasks if not isinstance(t, Exception)]:
        if t.kb is not None:
            t.kb.cast, t.kb.perturb = cast, False
    return dtype if cast or not specs else native_dtype(base, specs[0][1])


def prepare_for_bench(base: Task, cand_tasks: list[tuple[str, Any]], case: Case) -> list[tuple[str, Any]]:
    """Every model built for the case's sizes; a ModelNew that cannot be built becomes that row's error."""
    try:
        base.prepare(case)
    except ReferenceInitError as e:
        raise TaskError("reference", f"Model(*get_init_inputs()) raised at sizes {_fmt(dict(case.shape))}: {e}; pass "
                        "sizes=... the reference accepts", usage=True) from e
    out: list[tuple[str, Any]] = []
    for display, t in cand_tasks:
        if isinstance(t, Exception):
            out.append((display, t))
            continue
        try:
            t.prepare(case)
            out.append((display, t))
        except (CandidateInitError, ReferenceInitError) as e:
            out.append((display, e))
    return out
