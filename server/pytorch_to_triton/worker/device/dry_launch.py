"""Triton launches recorded without running them: the launch log of a dry run at the problem's full size (issue 46).

Inside `recording()` every kernel launch (JITFunction.run or the interpreter's InterpretedFunction.run, after any
@autotune/@heuristics wrapper chose its config) is handed to this module instead of running: its arguments are
fake tensors (torch's FakeTensorMode), so nothing is allocated and no program runs. Each launch is kept as a
DryLaunch: the kernel, its grid as Triton evaluates it (a callable grid gets the bound arguments, constexprs
included), every argument (a tensor as dtype, shape, strides, storage offset and storage; a scalar as its value),
the launch options, and its specialisation (launch_specs.LaunchSpec, what a GPU compiles) taken with stand-in
pointers whose alignment is the fake tensor's (a storage offset of 3 floats is not 16-byte aligned on a GPU either).

Identical launches (same kernel, grid, argument layouts and values) are kept once with a repeat count: a loop of
256 RNN steps is one DryLaunch launched 256 times. What can go wrong in a launch at full size without running it is
judged here too: a grid dimension over CUDA's limits (x < 2^31, y and z <= 65535). interp_sample.py runs a few of a
DryLaunch's programs; target_compile.py compiles its spec for the target GPU.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .launch_specs import LaunchSpec, config_signature, launch_spec

# CUDA's grid limits (CUDA programming guide, "Technical Specifications": maximum x-dimension of a grid of thread
# blocks 2^31 - 1, y and z 65535), the same for every compute capability Triton targets.
GRID_LIMITS = (2**31 - 1, 65535, 65535)
STORAGE_SPACING = 1 << 44  # stand-in base addresses 16 TiB apart: a wrapped int32 offset (< 32 GiB) stays near its own
_OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "launch_cooperative_grid")


@dataclass(frozen=True)
class TensorArg:
    """A tensor argument as a launch sees it: its layout and which storage it views (no data)."""

    dtype: str  # torch dtype name, e.g. "float32"
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int  # storage offset, in elements
    storage: int  # index of its storage among the dry run's storages (views of one tensor share it)
    storage_bytes: int
    element_size: int

    def extent_bytes(self) -> int:
        """Bytes from the first to one past the last element this view can reach (0 for an empty view)."""
        if any(s == 0 for s in self.shape):
            return 0
        return (sum((n - 1) * abs(st) for n, st in zip(self.shape, self.strides)) + 1) * self.element_size


class StandIn:
    """What a kernel argument looks like to Triton without data: a dtype and a data_ptr() at a stand-in address."""

    def __init__(self, arg: TensorArg, torch_dtype: Any):
        self.arg = arg
        self.dtype = torch_dtype
        self.address = (arg.storage + 1) * STORAGE_SPACING + arg.offset * arg.element_size

    def data_ptr(self) -> int:
        """The stand-in address (aligned as the fake tensor's storage offset makes it)."""
        return self.address


@dataclass
class DryLaunch:
    """One distinct launch of the dry run."""

    kernel: Any  # the JITFunction / InterpretedFunction launched (this process only)
    name: str
    qualname: str
    file: str
    args: dict[str, Any]  # parameter -> TensorArg, a scalar, a constexpr value, None (bound, defaults applied)
    grid: tuple[int, int, int]
    options: dict[str, Any]  # num_warps, num_stages, ... as the launch passed them
    spec: LaunchSpec
    grid_fn: Any = None  # the callable grid, to evaluate at another config's meta-parameters
    autotuned: bool = False
    repeats: int = 1
    line: int | None = None  # the host line that launched it (the candidate's file), when found

    def key(self) -> tuple[Any, ...]:
        """Same kernel, grid, argument layouts and values, options: the same launch."""
        return (self.qualname, self.file, self.grid, tuple(sorted((k, repr(v)) for k, v in self.args.items())),
                tuple(sorted((k, repr(v)) for k, v in self.options.items())))

    def programs(self) -> int:
        """Programs in the grid."""
        return self.grid[0] * self.grid[1] * self.grid[2]

    def tensors(self) -> dict[str, TensorArg]:
        """The tensor arguments by parameter name."""
        return {k: v for k, v in self.args.items() if isinstance(v, TensorArg)}

    def describe(self) -> str:
        """'kernel[grid](x: float32 (128, 512, 768), ...)' for a report."""
        ts = ", ".join(f"{k}: {t.dtype} {tuple(t.shape)}" for k, t in list(self.tensors().items())[:4])
        return f"{self.name}[{', '.join(str(g) for g in self.grid)}]({ts})"


@dataclass
class LaunchLog:
    """Every distinct launch of one dry run, in first-launch order, and why one could not be kept."""

    launches: list[DryLaunch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    storages: dict[Any, tuple[int, int]] = field(default_factory=dict)  # storage ref -> (index, nbytes)
    _by_key: dict[tuple[Any, ...], DryLaunch] = field(default_factory=dict)
    total: int = 0  # launches, repeats included

    def storage_of(self, t: Any) -> tuple[int, int]:
        """(index, nbytes) of a (fake) tensor's storage; views of one tensor get the same index."""
        try:
            from torch.multiprocessing.reductions import StorageWeakRef

            ref: Any = StorageWeakRef(t.untyped_storage())
            nbytes = int(t.untyped_storage().nbytes())
        except Exception:  # noqa: BLE001 - a tensor without a storage (a subclass): its own extent
            ref, nbytes = id(t), int(t.numel() * t.element_size())
        if ref not in self.storages:
            self.storages[ref] = (len(self.storages), nbytes)
        return self.storages[ref]

    def add(self, launch: DryLaunch) -> None:
        """Keep a launch, or count it again when an identical one is kept."""
        self.total += 1
        k = launch.key()
        if k in self._by_key:
            self._by_key[k].repeats += 1
            return
        self._by_key[k] = launch
        self.launches.append(launch)


def _tensor_arg(log: LaunchLog, t: Any) -> TensorArg:
    index, nbytes = log.storage_of(t)
    return TensorArg(dtype=str(t.dtype).removeprefix("torch."), shape=tuple(int(s) for s in t.shape),
                     strides=tuple(int(s) for s in t.stride()), offset=int(t.storage_offset()), storage=index,
                     storage_bytes=nbytes, element_size=int(t.element_size()))


def _is_tensor(v: Any) -> bool:
    import torch

    return isinstance(v, torch.Tensor)


def _described(log: LaunchLog, v: Any) -> Any:
    """A launch argument as kept: TensorArg for a tensor, a TensorDescriptor's base likewise, values as they are."""
    if _is_tensor(v):
        return _tensor_arg(log, v)
    if type(v).__name__ == "TensorDescriptor" and _is_tensor(getattr(v, "base", None)):
        return {"descriptor": _tensor_arg(log, v.base), "shape": list(v.shape), "strides": list(v.strides),
                "block_shape": list(v.block_shape)}
    if isinstance(v, (tuple, list)):
        return tuple(_described(log, x) for x in v)
    return v


def stand_in(v: Any, original: Any = None) -> Any:
    """The argument Triton's binder and the interpreter get in place of a kept one (StandIn for a tensor)."""
    import torch

    if isinstance(v, TensorArg):
        return StandIn(v, getattr(torch, v.dtype))
    if isinstance(v, dict) and "descriptor" in v:
        if original is None:
            return StandIn(v["descriptor"], getattr(torch, v["descriptor"].dtype))
        try:
            return dataclasses.replace(original, base=StandIn(v["descriptor"], getattr(torch, v["descriptor"].dtype)))
        except Exception:  # noqa: BLE001 - a descriptor class that validates its base: keep the original
            return original
    if isinstance(v, tuple):
        return tuple(stand_in(x) for x in v)
    return v


def _grid(grid: Any, bound: dict[str, Any]) -> tuple[int, int, int]:
    g = grid(dict(bound)) if callable(grid) else grid
    g = tuple(int(x) for x in g)
    if not 1 <= len(g) <= 3:
        raise ValueError(f"grid must have 1 to 3 dimensions, got {g}")
    return g + (1,) * (3 - len(g))  # type: ignore[return-value]


def _host_line(file: str | None) -> int | None:
    """The line of the candidate's file that launched (the innermost frame in it)."""
    if not file:
        return None
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_code.co_filename == file:
            return frame.f_lineno
        frame = frame.f_back
    return None


def _record(log: LaunchLog, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any], host_file: str | None) -> None:
    from .runtime import RECORDER, _heuristic_values

    if kwargs.get("warmup"):
        return
    fn = kernel.fn
    code = getattr(fn, "__code__", None)
    params = list(inspect.signature(fn).parameters)
    call_kw = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
    bound_sig = inspect.signature(fn).bind_partial(*args, **{k: v for k, v in call_kw.items() if k in params})
    bound_sig.apply_defaults()
    bound = dict(bound_sig.arguments)
    options = {k: v for k, v in call_kw.items() if k in _OPTION_NAMES}
    kept = {k: _described(log, v) for k, v in bound.items()}
    spec_kw = {k: stand_in(v, bound.get(k)) for k, v in kept.items()}
    spec = launch_spec(kernel, (), {**spec_kw, **options}, RECORDER.outer)
    spec.heuristics = _heuristic_values(RECORDER.outer, spec.params)
    spec.full_size = True
    pruned = _autotuner_pruned(RECORDER.outer)
    if pruned is not None:
        spec.kept = sorted(config_signature(c) for c in pruned)
    grid_arg = kwargs.get("grid")
    launch = DryLaunch(kernel=kernel, name=getattr(fn, "__name__", "kernel"), qualname=getattr(fn, "__qualname__", ""),
                       file=code.co_filename if code else "", args=kept, grid=_grid(grid_arg, bound),
                       options=options, spec=spec, grid_fn=grid_arg if callable(grid_arg) else None,
                       autotuned=spec.autotuned, line=_host_line(host_file))
    log.add(launch)


def _autotuner_pruned(outer: Any) -> list[Any] | None:
    """The configs the launch's @autotune kept after its pruning (recording()'s wrapper), None without pruning."""
    for _ in range(8):
        if outer is None:
            return None
        if type(outer).__name__ == "Autotuner":
            if not (getattr(outer, "early_config_prune", None) or getattr(outer, "perf_model", None)):
                return None
            return getattr(outer, "_p2t_pruned", None)
        outer = getattr(outer, "fn", None)
    return None


@contextlib.contextmanager
def recording(host_file: str | None = None) -> Iterator[LaunchLog]:
    """Every launch inside the block is recorded into the yielded log and not run; host_file: the candidate's
    file, whose launching line each DryLaunch keeps. An @autotune's pruning is watched (the configs it keeps are
    the ones a GPU compiles), and its cached choices are forgotten first so that it prunes again."""
    from triton.runtime import autotuner

    from .runtime import RECORDER

    log = LaunchLog()
    if RECORDER.dry is not None:
        raise RuntimeError("a dry run is already recording")

    def dry(kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        _record(log, kernel, args, kwargs, host_file)

    prune = autotuner.Autotuner.prune_configs

    def prune_configs(self: Any, kwargs: dict[str, Any]) -> Any:
        kept = prune(self, kwargs)
        self._p2t_pruned = list(kept)
        return kept

    real_run = autotuner.Autotuner.run

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        self.cache = {}  # its choice for this key, made before: prune again so the kept configs are seen
        return real_run(self, *args, **kwargs)

    RECORDER.dry = dry
    autotuner.Autotuner.prune_configs, autotuner.Autotuner.run = prune_configs, run
    try:
        yield log
    finally:
        RECORDER.dry = None
        autotuner.Autotuner.prune_configs, autotuner.Autotuner.run = prune, real_run


def grid_findings(launch: DryLaunch) -> list[str]:
    """What keeps this launch's grid off every CUDA GPU ('' list when it fits): a dimension over its limit."""
    out = []
    for axis, (n, limit) in enumerate(zip(launch.grid, GRID_LIMITS)):
        if n > limit:
            out.append(f"grid dimension {'xyz'[axis]} is {n:,}, over CUDA's limit of {limit:,}")
    return out


def grid_at(launch: DryLaunch, meta: dict[str, Any]) -> tuple[int, int, int]:
    """The launch's grid with some meta-parameters replaced (another autotune config); its own grid when fixed."""
    if launch.grid_fn is None:
        return launch.grid
    bound: dict[str, Any] = {}
    for k, v in launch.args.items():
        bound[k] = _as_value(v)
    bound.update(meta)
    return _grid(launch.grid_fn, bound)


class _Shape:
    """A tensor stand-in a grid lambda can read (shape, size(), numel(), stride(), dtype)."""

    def __init__(self, t: TensorArg):
        import torch

        self.shape, self.dtype, self._t = t.shape, getattr(torch, t.dtype), t

    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    def stride(self, dim: int | None = None) -> Any:
        return self._t.strides if dim is None else self._t.strides[dim]

    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def data_ptr(self) -> int:
        return (self._t.storage + 1) * STORAGE_SPACING + self._t.offset * self._t.element_size


def _as_value(v: Any) -> Any:
    if isinstance(v, TensorArg):
        return _Shape(v)
    return v
