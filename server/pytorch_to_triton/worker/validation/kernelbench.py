"""KernelBench-form tasks: the models at each case's sizes, and the run of the planned cases (cases.py plans them,
sizes.py does the size arithmetic) with the checks that keep it honest (perturbed trainable parameters, outputs too
small for the tolerance, NaN/inf propagation).

A KernelBench problem keeps its sizes as module-level integers (`batch_size = 16`, `dim = 16384`) that
`get_inputs()` and `get_init_inputs()` read. Setting those module globals (and re-building both models when
`get_init_inputs()` changes with them) runs the unchanged problem at any size the reference accepts: shrunk
for Triton's CPU interpreter, odd, 1, 0, or whatever `sizes` / a case's `sizes` ask for.
See references/task-format.md, "Form (b): KernelBench".
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any

import torch

from ..device.runtime import RECORDER
from . import budget, case_log
from . import cases as cs
from . import compare as cmp
from . import memory as mem
from . import sizes as sz
from .errors_fmt import describe
from .nest import flatten
from .nest import tensors_in as _tensors
from .output_checks import SMALL_OUTPUT_FACTOR
from .poison import FLOAT_POISON_B
from .tasks import Case, TaskError, dtype_from_name, dtype_name

if TYPE_CHECKING:
    from .tasks import Task
    from .validate import Validator


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



def _kept(model: Any) -> str:
    n = cs.kept_buffers(model)
    return f"; {n} buffer(s) kept as the problem defines them (masks, tables, running stats)" if n else ""


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
    cand_originals: dict[str, Any] = field(default_factory=dict)  # the candidate's copies of the problem's sizes
    sizes: dict[str, int] = field(default_factory=dict)
    key: tuple[str, str] | None = None
    parameters: str = "not built yet"
    notes: list[str] = field(default_factory=list)

    def set_sizes(self, sizes: dict[str, int]) -> None:
        """Module globals at `sizes` (the problem's own values for the others) until the next call."""
        sz.set_sizes(self.ref_mod, self.originals, sizes)
        if self.cand_mod is not None:  # a ModelNew file that copies the problem's constants (batch_size = 256, as
            # `new` scaffolds it) reads them at the same sizes (issue 40's trial: a hidden state sized by the copy)
            sz.set_sizes(self.cand_mod, self.cand_originals, {k: v for k, v in sizes.items() if self._copied(k)})
        self.sizes = dict(sizes)

    def _copied(self, key: str) -> bool:
        name = key.split("[", 1)[0]
        if not hasattr(self.cand_mod, name):
            return False
        ref0 = self.originals.get(name, getattr(self.ref_mod, name, None))
        return self.cand_originals.get(name, getattr(self.cand_mod, name)) == ref0

    def restore(self) -> None:
        """The modules' own sizes again."""
        sz.set_sizes(self.ref_mod, self.originals, {})
        if self.cand_mod is not None:
            sz.set_sizes(self.cand_mod, self.cand_originals, {})
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
        task.ref_model = ref
        task.ref_fn, task.cand_fn = _from_built_state(ref), _from_built_state(cand)
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
            n = cs.perturb(ref, self.seed)
            return f"perturbed ({n} trainable parameters, seeded noise){_kept(ref)}"
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
        n = cs.perturb(ref, self.seed)
        cand.load_state_dict(ref.state_dict())
        return f"perturbed ({n} trainable parameters, seeded noise){_kept(ref)}, the same values loaded into ModelNew"

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


def _from_built_state(model: Any) -> Any:
    """Each call of a model from the state it was built with, as KernelBench's own check calls a fresh model once:
    a stateful model (33_VanillaRNN's `self.hidden = tanh(...)`) is called several times here (two poisoned
    candidate runs, the reference's float64 copy), and each must see the same state (memory.state_kept)."""
    if not isinstance(model, torch.nn.Module):
        return model

    def call(*args: Any, **kwargs: Any) -> Any:
        with mem.state_kept(model):
            return model(*args, **kwargs)

    call.__wrapped__ = model  # type: ignore[attr-defined]  # run_benchmark times the model itself (bench.py)
    return call


def native_dtype(task: Task, sizes: dict[str, int]) -> torch.dtype:
    """The dtype of the problem's first floating input (what the report labels a case with), from fake tensors."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with sz.sized(task.ref_mod, sizes):
        try:
            with FakeTensorMode(allow_non_fake_inputs=True):
                for t in _tensors(list(task.ref_mod.get_inputs())):
                    if t.is_floating_point():
                        return t.dtype
        except Exception:  # noqa: BLE001
            pass
    return torch.float32


# ---- the validation of a KernelBench task ---------------------------------------------------------------------
def validate_cases(v: Validator, task: Task, args: dict[str, Any], emit: Any,
                   report: dict[str, Any]) -> list[cs.Spec]:
    """Run every planned KernelBench case into v.cases; fill the report's KernelBench fields. Returns the main case
    per dtype, (name, sizes, dtype, 1.0), for the gradient check."""
    kb = task.kb
    assert kb is not None
    kb.seed = int(args.get("seed", 0))
    sizes = args.get("sizes")
    if v.device != "cuda" and args.get("sizes_interpreter"):  # the sidecar's [sizes.interpreter]: CPU runs only
        sizes = {**args["sizes_interpreter"], **(sizes or {})}
        v.notes.append("interpreter-only sizes from the sidecar's [sizes.interpreter]: "
                       + sz.fmt(args["sizes_interpreter"]) + " (a GPU run uses the problem's full size)")
    p = cs.plan(task.ref_mod, v.device, sizes, args.get("cases"), bool(args.get("replace_cases")),
                args.get("only_cases"), cs.required(args))
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
    checks = {"parameters": "", "small_outputs": f"checked: max|reference| < {SMALL_OUTPUT_FACTOR:g} x atol adds a "
                                                 "warning and a relative-error check", "nan_inf": "not run"}
    state: dict[str, Any] = {}
    RECORDER.record_blocks(True)  # the candidate's block sizes, for the long_ variants (cases.widen_long)
    try:
        _run_planned(v, task, args, emit, report, p, dts, trials, total, checks, ran, state)
    finally:
        RECORDER.record_blocks(False)
    v.tier, v.kind, v.values, v.hook = cs.CONTRACT, None, None, None
    checks["parameters"] = kb.parameters
    v.notes.extend(n for n in kb.notes if n not in v.notes)
    kb.restore()
    report["full_size_run"] = p.full_size_run
    main_ran = any(c.kind == "main" for c in p.cases)
    report["sizes_used"] = dict(p.main.sizes) if main_ran or not ran else dict(next(iter(ran.values())))
    if not main_ran and ran:  # --only-cases without the main case: say which case these sizes are
        report["sizes_case"] = list(ran)
    report["kernelbench"] = {"size_constants": p.defaults, "sizes_pinned": p.pinned, "main_case": p.main.name,
                             "full_size_run": p.full_size_run, "cases_sizes": ran, "checks": checks,
                             "automatic_variants": not bool(args.get("replace_cases"))}
    return [cs.Spec(p.main.name, dict(p.main.sizes), d, 1.0, cs.CONTRACT, p.main.why) for d in dts]


def _run_planned(v: Validator, task: Task, args: dict[str, Any], emit: Any, report: dict[str, Any], p: cs.Plan,
                 dts: list[torch.dtype], trials: int, total: int, checks: dict[str, str], ran: dict[str, Any],
                 state: dict[str, Any]) -> None:
    done = 0  # runs finished; cases left out (budget, a grown case with no sizes) come off `total`: never past it
    bud = budget.from_args(args, v.device)
    weights: dict[tuple[tuple[str, int], ...], float | None] = {}
    per_input: list[float | None] = []  # the main case's weight per input element (its reference runs there anyway)

    def weight(sizes: dict[str, int]) -> float | None:
        """The case's inputs, times the main case's weight per input element: the reference's forward runs on fake
        tensors at the main case's sizes only (at a variant's it may end the worker: tests/faults'
        kb_reference_crash_on_odd.py, skipped as the harness's fault when the case itself runs)."""
        if bud.seconds is None:
            return None
        key = tuple(sorted(sizes.items()))
        if key not in weights:
            if not per_input:
                full, inputs = budget.work(task.ref_mod, dict(p.main.sizes)), \
                    budget.work(task.ref_mod, dict(p.main.sizes), run_model=False)
                per_input.append(full / inputs if full and inputs else None)
            n = budget.work(task.ref_mod, sizes, run_model=False)
            weights[key] = n * per_input[0] if n is not None and per_input[0] is not None else n
        return weights[key]

    def runs_of(c: cs.Planned) -> int:
        return trials if c.kind in ("main", "size", "user") else (len(c.layouts) if c.kind == "layout" else 1)

    def widen(c: cs.Planned) -> None:
        widened = cs.widen_long(task.ref_mod, p, c, RECORDER.widest_block())
        if c.grow == "tiles":  # after the main case: its launches name the candidate's blocks
            widened = cs.widen_tiles(task.ref_mod, p, c, RECORDER.blocks(), RECORDER.widest_group())
        if widened:
            v.notes.append(widened)

    def announce(rest: list[cs.Planned]) -> None:
        """The up-front estimate, once the first trial has run: every case still to come, widened first."""
        bud.announced = True
        for c in rest:
            widen(c)
        rows = [(cs.label(c), weight(c.sizes), runs_of(c), c.kind in ("main", "user") or c.tiles)
                for c in rest if not (c.grow and not c.sizes)]
        line = f"{report['candidate']}: " + bud.plan_line(rows)
        v.notes.append(line)
        emit("progress", message=line, progress=done, total=total)

    queue = [c for _ in dts for c in p.cases]
    for i, (dtype, c) in enumerate((d, c) for d in dts for c in p.cases):
        widen(c)
        if c.grow and not c.sizes:
            total -= trials if c.kind in ("main", "size", "user") else 2
            continue
        n_trials = trials
        if bud.seconds is not None and c.kind not in ("main", "user"):
            w = weight(c.sizes)
            if not bud.fits(w, runs_of(c)):
                if c.tiles:  # the only case past one of the candidate's blocks: never left out
                    n_trials = 1
                    v.notes.append(f"time budget: {c.name} kept though it does not fit (the only case with two or "
                                   f"more of the candidate's blocks per tiled size), 1 trial")
                elif c.kind == "size" and trials > 1 and bud.fits(w, 1):
                    n_trials = 1  # fewer trials before fewer cases
                    v.notes.append(f"time budget: {c.name} ran 1 trial instead of {trials}")
                else:
                    bud.drop(f"{cs.label(c)} {dtype_name(dtype)}" if len(dts) > 1 else cs.label(c), w, runs_of(c))
                    total -= trials if c.kind in ("main", "size", "user") else 2
                    continue
        t_case = time.monotonic()
        emit("progress", message=f"{report['candidate']}: {cs.label(c)} {dtype_name(dtype)} ({sz.fmt(c.sizes)})",
             progress=done, total=total)  # the runs finished before this case: in-launch events add a fraction
        done += trials if c.kind in ("main", "size", "user") else 2
        v.tier, v.kind, v.values, v.hook = c.tier, c.robust, c.values, c.hook
        try:
            _run_one(v, task, args, c, dtype, n_trials, checks, ran, state, bud, weight,
                     lambda rest=queue[i + 1:]: None if bud.announced or bud.seconds is None else announce(rest))
        finally:
            if c.kind not in ("main", "size", "user"):
                bud.observe(weight(c.sizes), runs_of(c), time.monotonic() - t_case)
    bud.settle(v.notes)
    note = bud.note()
    if note:
        v.notes.append(note)


def _run_one(v: Validator, task: Task, args: dict[str, Any], c: cs.Planned, dtype: torch.dtype, trials: int,
             checks: dict[str, str], ran: dict[str, Any], state: dict[str, Any], bud: budget.Budget, weight: Any,
             after_first: Any) -> None:
    """One planned case at one dtype, its findings and records into v; each trial of a size case is timed into the
    budget, and `after_first()` runs once the first trial has (the up-front estimate)."""
    try:
        if c.kind == "layout":
            task.kb.prepare(task, c.sizes, dtype)
            base = task.make_inputs(Case(c.name, dict(c.sizes), dtype, v.device, cs.case_seed(args, c.name, dtype)))
            variants = cs.layout_variants(base)
            del base
            for variant in [lay for lay in c.layouts if lay in variants]:
                # pop: each variant's inputs are freed once it has run
                rec = v.run_case(task, c.name, dict(c.sizes), dtype, 1.0, 0, inputs=variants.pop(variant),
                                 variant=variant)
                v.cases.append({**rec, "sizes": dict(c.sizes)})
            return
        if c.kind == "extreme":  # the same inputs, floating ones scaled to |x| ~ 1e4
            task.kb.prepare(task, c.sizes, dtype)
            base = task.make_inputs(Case(c.name, dict(c.sizes), dtype, v.device, cs.case_seed(args, c.name, dtype)))
            rec = v.run_case(task, c.name, dict(c.sizes), dtype, 1.0, 0, inputs=cs.extreme_inputs(base),
                             variant="x1e4")
            v.cases.append({**rec, "sizes": dict(c.sizes)})
            return
        if c.kind == "nan_inf":
            checks["nan_inf"] = nan_inf_check(v, task, args, c, dtype)
            return
        chosen = _accepted(v, task, args, c, dtype)
        if chosen is None:
            return
        ran[chosen.name] = dict(chosen.sizes)
        task.kb.prepare(task, chosen.sizes, dtype)  # models at these sizes before the memory estimate
        for trial in range(trials):
            t_trial = time.monotonic()
            try:
                rec = v.run_case(task, chosen.name, dict(chosen.sizes), dtype, 1.0, trial, state=state)
                bud.observe(weight(chosen.sizes), 1, time.monotonic() - t_trial)
                after_first()
            except TaskError:
                if not chosen.optional:
                    raise
                v.notes.append(f"reference rejects the {chosen.name} variant ({sz.fmt(chosen.sizes)}) at trial "
                               f"{trial}; skipped")
                break
            rec["sizes"] = dict(chosen.sizes)
            v.cases.append(rec)
            if not rec["ok"]:
                break
    except CandidateInitError as e:
        err = describe(e.exc, "run", v.user_dirs)
        v.find("exception", cs.label(c), f"ModelNew(*get_init_inputs()) raised {err['type']}: "
               f"{err['message'][:300]} (sizes {sz.fmt(c.sizes)})", err)
        v.cases.append({"name": cs.label(c), "dtype": dtype_name(dtype), "ok": False, "sizes": dict(c.sizes),
                        "tier": v.tier,
                        "error": err})
    except ReferenceInitError as e:
        if not c.optional:
            raise TaskError("reference", f"Model(*get_init_inputs()) raised at sizes {sz.fmt(c.sizes)}: {e}; pass "
                            "sizes=... the reference accepts", usage=True) from e
        v.notes.append(f"reference Model rejects the {c.name} sizes ({sz.fmt(c.sizes)}): {e}; skipped")


def _accepted(v: Validator, task: Task, args: dict[str, Any], c: cs.Planned, dtype: torch.dtype) -> cs.Planned | None:
    """`c`, or its first fallback the reference accepts (it runs once on the variant's inputs); None if none."""
    if not c.optional:
        return c
    tried = []
    for option in [c, *c.fallbacks]:
        if option.name in v.log.reference_crashed:  # an earlier worker died in this probe (case_log.py)
            tried.append(f"{option.name} ({sz.fmt(option.sizes)}): the reference crashed the worker")
            continue
        try:
            v.log.phase(case_log.key(option.name, dtype_name(dtype), 0), option.name, "reference")
            if v.device == "cuda":  # a reference's device-side assert would kill the CUDA context for every later case
                why = host_rejects(task.ref_mod, option.sizes, cs.case_seed(args, option.name, dtype))
                if why:
                    raise ValueError(f"rejected on the host before any GPU run: {why}")
            task.kb.prepare(task, option.sizes, dtype)
            inputs = task.make_inputs(Case(option.name, dict(option.sizes), dtype, v.device,
                                           cs.case_seed(args, option.name, dtype)))
            with torch.no_grad():
                task.ref_fn(*inputs)
            if tried:
                v.notes.append(f"reference rejects the {c.name} variant ({tried[0]}); ran {option.name} "
                               f"({sz.fmt(option.sizes)}) instead")
            return option
        except CandidateInitError:
            raise
        except Exception as e:  # noqa: BLE001 - the reference's refusal decides: skipped with a note
            v.log.check(e, option.name, "reference")  # a device-side assert: this worker must go (harness fault)
            tried.append(f"{option.name} ({sz.fmt(option.sizes)}): {type(e).__name__}: {str(e)[:120]}")
    v.notes.append(f"reference rejects the {c.name} variant; skipped: " + "; ".join(tried[:3]))
    return None


HOST_CHECK_ELEMS = 1 << 22  # a variant up to this many input + output elements is run on the host first (seconds)


def host_rejects(mod: ModuleType, sizes: dict[str, int], seed: int) -> str | None:
    """Why the reference refuses these sizes, checked without the GPU: on fake tensors, then (when small enough)
    for real on the host, where an out-of-range index raises a clean IndexError instead of a device-side assert.
    None when it accepts them (or they are too big to run on the host: the fake tensors' word stands)."""
    n, accepted = sz.footprint(mod, sizes)
    if accepted is False:
        return "the reference raises on fake tensors at these sizes"
    if n is None or n > HOST_CHECK_ELEMS:
        return None
    with sz.sized(mod, sizes):
        try:
            torch.manual_seed(0)
            model = mod.Model(*list(getattr(mod, "get_init_inputs", list)()))
            torch.manual_seed(seed)
            with torch.device("cpu"), torch.no_grad():
                model(*[x.cpu() if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()])
        except Exception as e:  # noqa: BLE001 - the reference's refusal is the answer
            return f"{type(e).__name__}: {str(e)[:160]}"
    return None


def nan_inf_check(v: Validator, task: Task, args: dict[str, Any], c: cs.Planned, dtype: torch.dtype) -> str:
    """NaN and +-inf put into the first floating input: where the reference's output is non-finite, the candidate's
    must be too (and where it is finite, close). Skipped, with a note, when the reference does not propagate."""
    task.kb.prepare(task, c.sizes, dtype)
    v.case = Case(c.name, dict(c.sizes), dtype, v.device, cs.case_seed(args, c.name, dtype))  # TOLERANCES(case)
    inputs = task.make_inputs(v.case)
    placed = cs.nan_inf_inputs(inputs, cs.case_seed(args, "nan_inf", dtype))
    if placed is None:
        return "skipped: no floating input large enough to hold NaN/inf"
    idx, inputs = placed
    label = "nan_inf"
    try:
        ref_out = v._reference(task.ref_fn, [a.clone() if isinstance(a, torch.Tensor) else a for a in inputs])
    except Exception as e:  # noqa: BLE001
        v.notes.append(f"NaN/inf check skipped: the reference raises on NaN/inf inputs ({type(e).__name__})")
        return "skipped: the reference raises on NaN/inf inputs"
    refs = [r for r in flatten(ref_out)]
    del ref_out
    if not any(isinstance(r, torch.Tensor) and r.is_floating_point() and not bool(torch.isfinite(r).all())
               for r in refs):
        v.notes.append(f"NaN/inf check skipped: the reference's output stays finite with NaN/inf in input {idx} (it "
                       "does not propagate them)")
        return f"skipped: the reference does not propagate NaN/inf from input {idx}"
    rec: dict[str, Any] = {"name": label, "dtype": dtype_name(dtype), "trial": 0, "ok": False, "sizes": dict(c.sizes),
                           "tier": v.tier, "robustness_kind": v.kind,
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
    outs = flatten(out)
    ok = len(outs) == len(refs)
    # The finite elements are judged as the case's values are: against float64 where it runs, under the one
    # Tolerance (the reference's own error on these inputs included).
    ref64, _ = v._ref64(inputs, task)
    refs64 = flatten(ref64) if ref64 is not None else [None] * len(refs)
    del ref64
    if len(refs64) != len(refs):
        refs64 = [None] * len(refs)
    missing_total = spurious_total = 0
    for i, (r, o, r64) in enumerate(zip(refs, outs, refs64)):
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
        overrides = v.args.get("tolerances_merged")
        if isinstance(r64, torch.Tensor) and r64.shape == r.shape:
            both &= torch.isfinite(r64)
            target = torch.where(both, r64, torch.zeros_like(r64))
            tol = cmp.tolerance(r.dtype, overrides, v.case, cmp.own_error(r, r64))
            rtol, atol = tol.rtol, tol.atol
        else:  # no float64 reference: the input-dtype one, as the stale check compares
            target = torch.where(both, r, torch.zeros_like(r))
            tol = cmp.tolerance(r.dtype, overrides, v.case)
            rtol, atol = tol.vs_native()
        m = cmp.compare(torch.where(both, o, torch.zeros_like(o)), target, rtol, atol, own=tol.own)
        if not m["ok"]:
            v.find("nan_propagation", label, f"output {i}: with NaN/inf in input {idx}, {m['mismatches']} finite "
                   f"elements differ from the reference beyond rtol={rtol:g} atol={atol:g}"
                   + (f" + {cmp.OWN_FACTOR:g}x its own error (up to {tol.own_max:.3g})" if tol.own is not None else "")
                   + f" (max abs err {m['max_abs_err']:.3g})", m["worst"][:3])
            ok = False
    rec.update(ok=ok, launches=ev.launches, nonfinite_missing=missing_total, nonfinite_spurious=spurious_total)
    v.cases.append(rec)
    return f"ran: NaN/inf in input {idx}, " + ("propagated like the reference" if ok else "not propagated like the "
                                                "reference")


# ---- run_benchmark ---------------------------------------------------------------------------------------------
def bench_specs(task: Task, args: dict[str, Any]) -> list[tuple[str, dict[str, int], float | None]]:
    """(name, sizes, sweep x) to time: the problem's sizes with `sizes` on top ("full" or "sized"), each case's
    sizes on top of those, or a sweep of one size ({'param': 'dim', 'values': [...]})."""
    main = {**sz.size_constants(task.ref_mod), **sz.check_sizes(task.ref_mod, args.get("sizes"))}
    sweep = args.get("sweep")
    if sweep:
        param = str(sweep["param"])
        sz.check_sizes(task.ref_mod, {param: 0}, where="sweep param")
        return [(f"{param}={v}", {**main, param: int(v)}, float(v)) for v in sweep["values"]]
    if args.get("cases"):
        out = []
        for i, c in enumerate(args["cases"]):
            name = str(c.get("name") or f"case{i}")
            if c.get("sizes") is None:
                raise TaskError("inputs", f"case {name}: a KernelBench problem takes cases as size overrides, e.g. "
                                f"{{'name': {name!r}, 'sizes': {{...}}}} with sizes among {sz.fmt(main)}", usage=True)
            out.append((name, {**main, **sz.check_sizes(task.ref_mod, c["sizes"], where=f"case {name} sizes")}, None))
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
        raise TaskError("reference", f"Model(*get_init_inputs()) raised at sizes {sz.fmt(dict(case.shape))}: {e}; pass "
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
