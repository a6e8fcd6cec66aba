"""The dry run at the problem's full size (issue 46): what the GPU would launch, found without a GPU in seconds.

The reference and the candidate run once at full size on fake tensors (torch's FakeTensorMode: shapes, strides and
dtypes, no data, nothing allocated), with Triton's launches intercepted (device/dry_launch.py: each launch's
kernel, grid, constexprs and argument layouts kept, no program run) and every torch op logged (OpLog: its FLOPs by
torch's own flop formulas, and the bytes of its tensors), so the library calls a candidate makes beside its Triton
kernels (cuBLAS, cuDNN, torch ops) are in the count too. What uses it:

- run_validation: the full-size launches' specialisations compiled for the target (target_compile.py: shared memory
  over the limit at the problem's head size, a compile failure), their grids checked against CUDA's limits, and
  each launch's last program run in stand-in memory (interp_sample.py) for an int32 offset that overflows at the
  full shapes; each a contract finding (full_size_findings);
- run_benchmark without a GPU: the ESTIMATE from this launch list (worker/benchmark/estimate.py).

The candidate runs as a GPU would run it: its file imported a second time with TRITON_INTERPRET unset (gpu_view), so
a wrapper that picks other tiles, configs or paths under the interpreter (`INTERPRET = os.environ.get(...)`, an
@autotune list cut to one config, a bf16 dot widened to fp32) takes its GPU path here; its kernels are then plain
JITFunctions, recorded at launch and interpreted only for the sampled programs (interp_sample.py). What it reads from
the device (is_cuda, the SM count) is still the host's: the fake tensors live on the CPU. A wrapper that reads tensor
values on the host (`.item()`, `if x.max() > 0`, a shape from data) cannot run on fake tensors: the dry run then
says why (DryRun.fallback) and the callers use the shrunk run's launches, labelled.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from .. import alarm
from ..device import dry_launch
from ..device.dry_launch import DryLaunch
from . import sizes as sz
from .nest import tensors_in
from .tasks import Case, Task

# Ops that move no data: allocations (their fill is a separate op when there is one).
_ALLOC = {"empty", "empty_strided", "new_empty", "new_empty_strided", "empty_like", "lift_fresh", "detach",
          "_local_scalar_dense", "scalar_tensor", "set_", "resize_", "_unsafe_view", "_reshape_alias", "alias"}
# A matmul in fp32 runs without TF32 (torch.backends.cuda.matmul.allow_tf32 defaults to False); a convolution in
# fp32 uses TF32 (torch.backends.cudnn.allow_tf32 defaults to True).
_MATMUL = {"mm", "addmm", "bmm", "baddbmm", "_scaled_mm", "addbmm", "matmul", "linear"}
_CONV = {"convolution", "_convolution", "cudnn_convolution", "convolution_overrideable", "_slow_conv2d_forward",
         "mkldnn_convolution", "_convolution_mode"}
_ATTN = {"_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
         "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_flash_attention_for_cpu",
         "_flash_attention_forward", "_efficient_attention_forward"}


@dataclass
class Op:
    """One torch op of a dry run: its FLOPs and the bytes of its tensors at full size."""

    name: str
    flops: float
    bytes: float
    dtype: str
    precision: str  # how a GPU runs its FLOPs: fp32 (CUDA cores), tf32, bf16, fp16, or "memory" (no FLOPs)
    repeats: int = 1

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"op": self.name, "flops": self.flops, "bytes": self.bytes, "dtype": self.dtype,
                "precision": self.precision, "repeats": self.repeats}


def _precision(name: str, dtype: torch.dtype) -> str:
    if dtype in (torch.bfloat16,):
        return "bf16"
    if dtype in (torch.float16,):
        return "fp16"
    if dtype.is_floating_point and dtype.itemsize <= 1:
        return "fp8"
    if name in _CONV:
        return "tf32"
    return "fp32"


def _sdpa_flops(args: tuple[Any, ...]) -> float:
    q, k = args[0], args[1]
    b_h = math.prod(q.shape[:-2]) if q.dim() > 2 else 1
    return 4.0 * b_h * q.shape[-2] * k.shape[-2] * q.shape[-1]


# The reference's and the candidate's calls on fake tensors, together: what a GPU launches is known in well under a
# second for the fixtures and the gallery on the dev CPU (a few thousand ops at ~0.1 ms each); a call still running
# after this is a loop fake tensors cannot end (one that waits for memory, a value, a sleep), which would otherwise
# hang the validation before its first case (tests/faults/memory_blowup.py looped on fake tensors until the call's
# 60 s timeout). The cases then run as without the dry run, the shrunk launches labelled in its stead. 10 s: ten
# times the slowest seen, and no more of a user's timeout spent before the first case (issue 49: the fault tests'
# loops on fake tensors spent 20 s each here).
CALL_BUDGET_S = 10.0


class DryRunTimeout(BaseException):
    """The dry run's calls ran past CALL_BUDGET_S. A BaseException: a user's `except Exception` inside the loop it
    stops must not swallow it."""


class OpLog(torch.utils._python_dispatch.TorchDispatchMode):
    """Logs every torch op that moves data (views and allocations left out), merged by (op, bytes, FLOPs); past
    `deadline` (time.perf_counter()) an op raises DryRunTimeout (a loop of torch ops in any thread stops there)."""

    def __init__(self, deadline: float = math.inf) -> None:
        super().__init__()
        from torch.utils.flop_counter import flop_registry

        self.registry = flop_registry
        self.ops: dict[tuple[Any, ...], Op] = {}
        self.deadline = deadline

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if time.perf_counter() > self.deadline:
            raise DryRunTimeout(f"still running after {CALL_BUDGET_S:.0f} s")
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        try:
            self._log(func, args, kwargs, out)
        except Exception:  # noqa: BLE001, S110 - an op the log cannot describe is left out, never the run
            pass
        return out

    def _log(self, func: Any, args: Any, kwargs: Any, out: Any) -> None:
        name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)
        base = name.rstrip("_")
        if base in _ALLOC or name in _ALLOC:
            return
        schema = getattr(func, "_schema", None)
        if schema is not None and schema.returns and all(
                r.alias_info is not None and not r.alias_info.is_write for r in schema.returns):
            return  # a view
        if not tensors_in(out):
            return  # a query (device, sizes): no data moves
        flops = 0.0
        packet = getattr(func, "overloadpacket", None)
        if packet in self.registry:
            flops = float(self.registry[packet](*args, **kwargs, out_val=out))
        elif base in _ATTN:
            flops = _sdpa_flops(args)
        seen: set[int] = set()
        nbytes = 0
        dtype = None
        for t in list(tensors_in(list(args))) + list(tensors_in(list(kwargs.values()))) + list(tensors_in(out)):
            if id(t) in seen:
                continue
            seen.add(id(t))
            nbytes += t.numel() * t.element_size()
            if dtype is None and t.is_floating_point():
                dtype = t.dtype
        if not nbytes and not flops:
            return
        dtype = dtype or torch.float32
        prec = _precision(base, dtype) if flops else "memory"
        key = (base, nbytes, flops, prec)
        if key in self.ops:
            self.ops[key].repeats += 1
        else:
            self.ops[key] = Op(base, flops, float(nbytes), str(dtype).removeprefix("torch."), prec)

    def totals(self) -> dict[str, float]:
        """FLOPs and bytes over every op (repeats included)."""
        return {"flops": sum(o.flops * o.repeats for o in self.ops.values()),
                "bytes": sum(o.bytes * o.repeats for o in self.ops.values())}


@dataclass
class DryRun:
    """The full-size launch list of one candidate, and what its reference does at that size."""

    at: Any  # the sizes (KernelBench) or the shape (function form) it ran at
    label: str  # what those are: "the problem's own sizes", "your sizes=", ...
    launches: list[DryLaunch] = field(default_factory=list)
    total_launches: int = 0
    ops: list[Op] = field(default_factory=list)  # the candidate's torch ops (library calls beside Triton)
    ref_ops: list[Op] = field(default_factory=list)
    ref_flops: float | None = None  # the reference's FLOPs at this size (torch's formulas), None if not run
    ref_bytes: float | None = None  # its inputs + outputs (+ parameters) bytes
    fallback: str | None = None  # why the candidate could not run here: its shrunk run's launches stand in
    ref_error: str | None = None
    notes: list[str] = field(default_factory=list)
    storages: int = 0

    @property
    def ok(self) -> bool:
        """The candidate ran at full size (its launch list is the full size's)."""
        return self.fallback is None


def _bytes(value: Any) -> int:
    seen: set[int] = set()
    total = 0
    for t in tensors_in(value):
        if id(t) not in seen:
            seen.add(id(t))
            total += t.numel() * t.element_size()
    return total


@contextlib.contextmanager
def _kb_sizes(task: Task, sizes: dict[str, int]) -> Iterator[None]:
    kb = task.kb
    before = dict(kb.sizes)
    kb.set_sizes(sizes)
    try:
        yield
    finally:
        if before:
            kb.set_sizes(before)
        else:
            kb.restore()


def _why(e: BaseException) -> str:
    name = type(e).__name__
    text = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
    if "DataDependent" in name or "_local_scalar_dense" in text or "data-dependent" in text.lower():
        return (f"the wrapper reads tensor values on the host ({name}: {text}), which fake tensors do not have "
                "(.item(), a Python if on a tensor, a size computed from data)")
    return f"{name}: {text}"


def run(task: Task, at: Any, dtype: torch.dtype | None, device: str, label: str, cast: bool = False,
        budget_s: float = CALL_BUDGET_S) -> DryRun:
    """The dry run of task's reference and candidate at `at` (KernelBench sizes or a function-form shape); calls
    still running after budget_s are stopped (DryRun.fallback says so)."""

    dry = DryRun(at=at, label=label)
    host = str(Path(task.cand_path).resolve()) if task.cand_path else None
    view = gpu_view(task, dry.notes)
    ctx = _kb_sizes(task, at) if task.kernelbench else contextlib.nullcontext()
    before = _state()
    try:
        _run_bounded(task, at, dtype, device, cast, view, host, dry, ctx, budget_s)
    finally:
        _restore(before)
    return dry


def _state() -> tuple[Any, ...]:
    """What the dry run sets process-wide and a `with` block would put back: the dispatch mode stack's depth, the
    fake mode, grad mode, the launch recorder and the autotuner methods dry_launch.recording patches."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack
    from triton.runtime import autotuner

    fake = torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE)
    return (len(_get_current_dispatch_mode_stack()), fake, torch.is_grad_enabled(),
            autotuner.Autotuner.prune_configs, autotuner.Autotuner.run)


def _restore(before: tuple[Any, ...]) -> None:
    """Put back what a stopped call left behind. The time limit's SIGALRM raises wherever the call is, also between
    a `with` block's __enter__ and its body, and then __exit__ never runs: an OpLog left on the dispatch stack made
    every later torch op of the worker raise DryRunTimeout (the CI run of 2026-12-07: 30 tests after one stopped
    dry run in the same process)."""
    from torch.utils._python_dispatch import _get_current_dispatch_mode_stack, _pop_mode
    from triton.runtime import autotuner

    from ..device.runtime import RECORDER

    depth, fake, grad, prune, run_ = before
    while len(_get_current_dispatch_mode_stack()) > depth:
        _pop_mode()
    if fake is None and torch._C._get_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE) is not None:
        torch._C._unset_dispatch_mode(torch._C._TorchDispatchModeKey.FAKE)
    torch.set_grad_enabled(grad)
    RECORDER.dry = None
    autotuner.Autotuner.prune_configs, autotuner.Autotuner.run = prune, run_


def _run_bounded(task: Task, at: Any, dtype: torch.dtype | None, device: str, cast: bool, view: ModuleType | None,
                 host: str | None, dry: DryRun, ctx: Any, budget_s: float) -> None:
    """run()'s body: both calls on fake tensors within budget_s (DryRun.fallback says which was stopped)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with ctx, FakeTensorMode(allow_non_fake_inputs=True), torch.no_grad():
        originals = _gpu_sized(task, view, at) if view is not None and task.kernelbench else {}
        try:
            # SIGALRM stops a sleep or a pure-Python loop (main thread), OpLog's deadline a loop of torch ops (any)
            deadline = time.perf_counter() + budget_s
            with alarm.time_limit(budget_s, lambda: DryRunTimeout(f"still running after {budget_s:.0f} s")):
                _run_both(task, at, dtype, device, cast, view, host, dry, deadline)
        except DryRunTimeout:
            where = "the candidate" if dry.ref_flops is not None or dry.ref_error else "the reference"
            dry.fallback = (f"{where} was still running on fake tensors after {budget_s:.0f} s and was stopped (a "
                            "loop that waits for memory, a value or time, which fake tensors never give)")
            if where == "the reference":
                dry.ref_error = dry.fallback
        finally:
            if view is not None and originals:
                sz.set_sizes(view, originals, {})


def _run_both(task: Task, at: Any, dtype: torch.dtype | None, device: str, cast: bool, view: ModuleType | None,
              host: str | None, dry: DryRun, deadline: float = math.inf) -> None:
    """The reference's call (its ops and FLOPs) and the candidate's (its launches and ops) into `dry`."""
    try:
        inputs, ref, cand = _build(task, at, dtype, device, cast, view)
    except Exception as e:  # noqa: BLE001 - the reference's inputs or models do not build on fake tensors
        dry.fallback = dry.ref_error = f"the inputs or models do not build on fake tensors: {_why(e)}"
        return
    try:
        with OpLog(deadline) as log:
            out = ref(*inputs)
        dry.ref_ops = list(log.ops.values())
        params = list(ref.parameters()) + list(ref.buffers()) if isinstance(ref, torch.nn.Module) else []
        dry.ref_flops = log.totals()["flops"]
        dry.ref_bytes = float(_bytes(inputs) + _bytes(out) + _bytes(params))
    except Exception as e:  # noqa: BLE001 - the reference has an op without a fake kernel: no reference figures
        dry.ref_error = _why(e)
        dry.notes.append(f"the reference does not run on fake tensors at {sz.fmt(at) if isinstance(at, dict) else at}:"
                         f" {dry.ref_error}; no reference FLOPs at full size")
    if cand is None:
        return
    try:
        with dry_launch.recording(host) as launches, OpLog(deadline) as log:
            cand(*inputs)
    except Exception as e:  # noqa: BLE001 - a wrapper that needs values: the shrunk run stands in
        dry.fallback = _why(e)
        return
    dry.launches, dry.total_launches = launches.launches, launches.total
    dry.notes.extend(launches.notes)
    dry.ops = list(log.ops.values())
    dry.storages = len(launches.storages)


_VIEWS: dict[tuple[str, int], ModuleType] = {}  # (file, mtime) -> its GPU view, imported once per version


def gpu_view(task: Task, notes: list[str]) -> ModuleType | None:
    """The candidate's file imported again with TRITON_INTERPRET unset: its module as a GPU imports it (None with a
    note when that import fails: the interpreter's module stands in)."""
    if task.cand_path is None or task.cand_mod is None:
        return None
    path = Path(task.cand_path).resolve()
    key = (str(path), path.stat().st_mtime_ns)
    if key in _VIEWS:
        return _VIEWS[key]
    name = f"p2t_gpu_view_{path.stem}_{len(_VIEWS)}"
    before = os.environ.pop("TRITON_INTERPRET", None)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001 - the interpreter's import stands in, said so
        sys.modules.pop(name, None)
        notes.append(f"the candidate's GPU path could not be imported ({type(e).__name__}: {str(e)[:160]}): the "
                     "launches are those its interpreter path makes")
        return None
    finally:
        if before is not None:
            os.environ["TRITON_INTERPRET"] = before
    _VIEWS[key] = mod
    return mod


def _gpu_sized(task: Task, view: ModuleType, at: dict[str, int]) -> dict[str, Any]:
    """The view's copies of the problem's sizes (a ModelNew file that repeats batch_size = ...) set to `at`, as
    KernelBenchState does for the candidate's module; the originals, to put back."""
    originals: dict[str, Any] = {}
    ref0 = {**sz.module_ints(task.ref_mod), **{k: v for k, v in task.kb.originals.items() if isinstance(v, int)}}
    copied = {k: v for k, v in at.items() if hasattr(view, k.split("[", 1)[0])
              and sz.module_ints(view).get(k) == ref0.get(k)}
    sz.set_sizes(view, originals, copied)
    return originals


def _build(task: Task, at: Any, dtype: torch.dtype | None, device: str, cast: bool,
           view: ModuleType | None) -> tuple[list[Any], Any, Any]:
    """(inputs, reference callable, candidate callable: from the GPU view when there is one) on fake tensors."""
    if not task.kernelbench:
        case = Case("dry_run", at, dtype or torch.float32, device, 0, 1.0)
        cand = task.cand_fn
        if view is not None and cand is not None:
            cand = getattr(view, getattr(cand, "__name__", ""), cand)
        return list(task.make_inputs(case)), task.ref_fn, cand
    mod, cmod = task.ref_mod, (view or task.cand_mod)
    init = list(getattr(mod, "get_init_inputs", list)())
    torch.manual_seed(0)
    ref = mod.Model(*init)
    cand = None
    if cmod is not None:
        torch.manual_seed(0)
        cand = cmod.ModelNew(*init)
    inputs = list(mod.get_inputs())  # on the host, as the models (the dry run runs where the interpreter does)
    if cast and dtype is not None and dtype.is_floating_point:
        inputs = [x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
        ref = ref.to(dtype)
        cand = cand.to(dtype) if cand is not None and hasattr(cand, "to") else cand
    return inputs, ref, cand


# ---- the validation's contract checks at full size ------------------------------------------------------------
LAST_PROGRAM_BUDGET_S = 10.0  # per launch: the last program of a heavy kernel at full size (a 32k-long K loop)
FINDINGS_BUDGET_S = 30.0  # every launch's last program together: a candidate of many distinct launches stays bounded


def full_size_findings(dry: DryRun) -> tuple[list[dict[str, Any]], list[str]]:
    """Contract findings of the full-size launch list (grid over CUDA's limits, int32 offset overflow in the last
    program of each launch) as (check, message, evidence) dicts, and notes."""
    from ..device import interp_sample

    found: list[dict[str, Any]] = []
    notes: list[str] = []
    unsampled: list[str] = []
    end = time.perf_counter() + FINDINGS_BUDGET_S
    for la in dry.launches:
        for why in dry_launch.grid_findings(la):
            found.append({"check": "target_resources", "kernel": la.name, "message": f"{la.name} cannot launch at "
                          f"the problem's full size ({_at(dry)}): {why} (grid {list(la.grid)})"
                          + (f", launched at line {la.line}" if la.line else ""),
                          "evidence": {"kernel": la.name, "grid": list(la.grid), "line": la.line, "full_size": True},
                          "fix": "put the large dimension on grid axis 0 (up to 2^31 - 1 programs), or loop over it "
                                 "inside each program"})
        if dry_launch.grid_findings(la):
            continue
        left = end - time.perf_counter()
        if left <= 0:
            unsampled.append(la.name)
            continue
        s = interp_sample.run_programs(la, max_programs=1, budget_s=min(LAST_PROGRAM_BUDGET_S, left))
        notes.extend(s.notes)
        if s.finding is not None:
            f = s.finding
            found.append({"check": "int32_offset_overflow", "kernel": la.name,
                          "message": f"{f['message']} ({_at(dry)})", "evidence": {**f, "full_size": True},
                          "fix": "compute the offset in int64: cast the program id or the stride first, e.g. "
                                 "pid.to(tl.int64) * stride (an int32 product wraps past 2^31 on the GPU)"})
    if unsampled:
        notes.append(f"int32 offsets at full size not checked for {len(unsampled)} launch(es) "
                     f"({', '.join(dict.fromkeys(unsampled))}): the last programs of the launches before them took the "
                     f"{FINDINGS_BUDGET_S:.0f} s these checks get")
    return found, notes


def _at(dry: DryRun) -> str:
    return sz.fmt(dry.at) if isinstance(dry.at, dict) else f"shape {list(dry.at)}"
