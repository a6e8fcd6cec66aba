"""Device choice, Triton import and the launch recorder the honesty checks rely on."""

from __future__ import annotations

import os
import re
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass
class LaunchRecorder:
    """Counts Triton kernel launches and tells the other guards when a launch is in progress."""

    count: int = 0
    names: list[str] = field(default_factory=list)
    compiled: dict[str, Any] = field(default_factory=dict)  # kernel name -> last CompiledKernel
    depth: int = 0
    owner: int = 0  # thread id of the guarded call; launches on other threads are counted but not trusted
    arg_bytes: int = 0  # bytes of the tensors handed to the launches (composition.py: is Triton's work negligible?)
    timing: bool = False  # CUDA events around each launch (composition.py: Triton's share of the GPU time)
    events: list[Any] = field(default_factory=list)
    interpreter: bool = False  # set by setup(): kernels run under Triton's interpreter (nothing compiled)
    # The audit's probes (issue 26): the distinct values each kernel's tl.constexpr parameters took, per kernel name;
    # one value per compile, so a parameter that takes a new value with every size recompiles per call.
    record_constexprs: bool = False
    constexprs: dict[str, dict[str, set[Any]]] = field(default_factory=dict)
    # Issue 36: each distinct launch specialisation as Triton would compile it (launch_specs.py), in launch order, for
    # the target compile (target_compile.py), the compile-count probe and the multi-tile cases (block sizes, configs).
    record_specs: bool = False
    specs: dict[str, Any] = field(default_factory=dict)  # LaunchSpec.key() -> LaunchSpec
    outer: Any = None  # the outermost @autotune/@heuristics wrapper of the launch in progress
    spec_facts: dict[str, dict[str, Any]] = field(default_factory=dict)  # GPU: key -> the real compile's facts
    # Issue 46: the dry run at the problem's full size (dry_launch.py): while set, a launch is handed to it and
    # nothing runs (its arguments are fake tensors); counts, names and the guards' state stay untouched.
    dry: Any = None
    # Issue 45: the tier (and robustness kind) of the case or probe variant now launching (tier_rules.py): a
    # specialisation takes the tier of the first call that launched it, and becomes contract once a contract call
    # launches it too, so a compile failure follows the tier of the sizes that need it.
    origin: tuple[str, str | None] = ("contract", None)

    @property
    def in_launch(self) -> bool:
        """True while Triton itself runs (its torch calls are not the candidate's compute)."""
        return self.depth > 0

    def reset(self) -> None:
        """Forget launches recorded so far."""
        self.count = 0
        self.names = []
        self.arg_bytes = 0
        self.events = []

    def record_blocks(self, on: bool) -> None:
        """Start (clearing what was seen) or stop recording constexpr values; reset() keeps them, so a caller
        collects them across guarded calls."""
        self.record_constexprs = on
        if on:
            self.constexprs = {}

    def record_launches(self, on: bool) -> None:
        """Start (clearing what was seen) or stop recording launch specialisations; reset() keeps them."""
        self.record_specs = on
        if on:
            self.specs, self.spec_facts, self.origin = {}, {}, ("contract", None)

    def launch_specs(self) -> list[Any]:
        """The distinct specialisations recorded, in launch order (launch_specs.LaunchSpec)."""
        return list(self.specs.values())

    def note_spec(self, kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
        """Record one launch's specialisation (once per distinct key); its key."""
        from .launch_specs import launch_spec

        spec = launch_spec(kernel, args, kwargs, self.outer)
        spec.heuristics = _heuristic_values(self.outer, spec.params)
        key = spec.key()
        if key not in self.specs:
            spec.tier, spec.kind = self.origin
            self.specs[key] = spec
        elif self.origin[0] == "contract":
            self.specs[key].tier, self.specs[key].kind = self.origin
        return key

    def note_compiled(self, key: str, ret: Any, error: BaseException | None) -> None:
        """GPU: what the real compile of a recorded launch gave (benchmarks/compile_agreement.py compares it with
        the CPU-side compile); cheap: the CompiledKernel is already there."""
        if key in self.spec_facts:
            return
        if error is not None:
            self.spec_facts[key] = {"ok": False, "error": f"{type(error).__name__}: {str(error)[-600:]}"}
        elif ret is not None and hasattr(ret, "metadata"):
            self.spec_facts[key] = {"ok": True, "n_regs": getattr(ret, "n_regs", None),
                                    "n_spills": getattr(ret, "n_spills", None),
                                    "shared": getattr(ret.metadata, "shared", None),
                                    "num_warps": getattr(ret.metadata, "num_warps", None)}

    def widest_block(self) -> int | None:
        """The largest tile the candidate's launches used: a power-of-two constexpr (at least 16) whose parameter
        is named like a block (BLOCK_N, TILE_M, CHUNK), over every kernel recorded."""
        sizes = [v for ps in self.constexprs.values() for name, vs in ps.items()
                 if any(w in name.upper() for w in ("BLOCK", "TILE", "CHUNK")) for v in vs
                 if type(v) is int and v >= 16 and v & (v - 1) == 0]
        return max(sizes, default=None)

    def blocks(self) -> list[int]:
        """Every tile width the candidate's launches used (block-named power-of-two constexprs >= 16), ascending;
        a block named for a whole head or feature dim (BLOCK_D, BLOCK_DMODEL, HEAD_DIM: next_power_of_2 of it)
        tiles nothing and is left out."""
        return sorted({v for ps in self.constexprs.values() for name, vs in ps.items()
                       if any(w in name.upper() for w in ("BLOCK", "TILE", "CHUNK")) and not _WHOLE_DIM.search(name)
                       for v in vs if type(v) is int and v >= 16 and v & (v - 1) == 0})

    def widest_group(self) -> int | None:
        """The largest grouped-swizzle width the launches used (a GROUP_M-like constexpr >= 2), None without one."""
        sizes = [v for ps in self.constexprs.values() for name, vs in ps.items() if "GROUP" in name.upper()
                 for v in vs if type(v) is int and v >= 2]
        return max(sizes, default=None)

    def note_constexprs(self, kernel: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Record the constexpr values of one launch (plain values as they are, anything else by its type)."""
        names = _constexpr_names(kernel)
        if not names:
            return
        arg_names = list(getattr(kernel, "arg_names", None) or [])
        bound = dict(zip(arg_names, args))
        bound.update(kwargs)
        seen = self.constexprs.setdefault(name, {})
        for p in names:
            if p in bound:
                v = bound[p]
                seen.setdefault(p, set()).add(v if isinstance(v, (int, float, bool, str, type(None))) else
                                              type(v).__name__)


def _heuristic_values(outer: Any, params: list[dict[str, Any]]) -> dict[str, Any]:
    """The constexpr values @triton.heuristics computed for a launch (by the names its wrappers set)."""
    names: set[str] = set()
    for _ in range(8):
        if outer is None:
            break
        if type(outer).__name__ == "Heuristics":
            names.update(getattr(outer, "values", {}) or {})
        outer = getattr(outer, "fn", None)
    return {p["name"]: p.get("value") for p in params if p["name"] in names}


RECORDER = LaunchRecorder()
_WHOLE_DIM = re.compile(r"(_D|_DMODEL|_DK|_DV|HEAD_?DIM|_HS)$", re.I)
_CONSTEXPR_NAMES: dict[Any, tuple[str, ...]] = {}  # keyed on the Python function itself (an id could be reused)


def _constexpr_names(kernel: Any) -> tuple[str, ...]:
    """The tl.constexpr parameters of a JITFunction or an InterpretedFunction (read from the annotations, which
    both keep on .fn; a string annotation under `from __future__ import annotations` too)."""
    fn = getattr(kernel, "fn", None)
    key = fn
    if key not in _CONSTEXPR_NAMES:
        import inspect

        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            params = []
        _CONSTEXPR_NAMES[key] = tuple(q.name for q in params if "constexpr" in str(q.annotation))
    return _CONSTEXPR_NAMES[key]


def _tensor_bytes(args: tuple[Any, ...]) -> int:
    """Bytes of the tensor arguments of one launch (their views' extents, not their whole storages)."""
    total = 0
    for a in args:
        nbytes = getattr(a, "nbytes", None)  # torch.Tensor (and numpy) only: ints and constexprs have none
        if isinstance(nbytes, int) and hasattr(a, "data_ptr"):
            total += nbytes
    return total


def _event_pair() -> tuple[Any, Any]:
    import torch

    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def _wrap_run(cls: type, *, counts: bool) -> None:
    if getattr(cls.run, "_p2t_wrapped", False):
        return
    orig = cls.run

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if counts and RECORDER.dry is not None:
            return RECORDER.dry(self, args, kwargs)
        spec_key = None
        if counts:
            RECORDER.count += 1
            name = getattr(self, "__name__", None) or getattr(getattr(self, "fn", None), "__name__", "kernel")
            RECORDER.names.append(name)
            RECORDER.arg_bytes += _tensor_bytes(args) + (_tensor_bytes(tuple(kwargs.values())) if kwargs else 0)
            if RECORDER.record_constexprs:
                RECORDER.note_constexprs(self, name, args, kwargs)
            spec_key = RECORDER.note_spec(self, args, kwargs) if RECORDER.record_specs else None
        outermost = not counts and RECORDER.outer is None
        if outermost:
            RECORDER.outer = self
        timed = counts and RECORDER.timing
        if timed:
            pair = _event_pair()
            pair[0].record()
        prof = sys.getprofile()
        sys.setprofile(None)  # the calls_reference probe must not see Triton's own Python
        RECORDER.depth += 1
        try:
            ret = orig(self, *args, **kwargs)
        except Exception as e:
            if counts and spec_key is not None and not RECORDER.interpreter:
                RECORDER.note_compiled(spec_key, None, e)
            raise
        finally:
            RECORDER.depth -= 1
            sys.setprofile(prof)
            if outermost:
                RECORDER.outer = None
        if timed:
            pair[1].record()
            RECORDER.events.append(pair)
        if counts and ret is not None and hasattr(ret, "asm"):
            RECORDER.compiled[RECORDER.names[-1]] = ret
            if spec_key is not None:
                RECORDER.note_compiled(spec_key, ret, None)
        return ret

    run._p2t_wrapped = True  # type: ignore[attr-defined]
    cls.run = run


def _hook_launch(metadata: Any) -> None:
    """Triton's launch-enter hook: a launch that did not pass through JITFunction.run (a compiled kernel's own
    launcher, `compiled[grid](...)`) is counted here; one inside the wrapped run is counted there already."""
    if RECORDER.depth == 0:
        RECORDER.count += 1
        data = getattr(metadata, "data", None)
        RECORDER.names.append(str(data.get("name", "kernel")) if isinstance(data, dict) else "kernel")


class launch_hook:
    """Context manager: Triton's launch-enter hook set for one guarded call on a GPU. Launch paths that skip
    JITFunction.run for speed (a compiled kernel's launcher, as the gallery's stage 3 `_FastLaunch` does) take the
    ordinary, recorded path while a hook is set, as every profiler expects; the rest reach `_hook_launch`. Not set
    while timing (the hook costs host time per launch) nor under the interpreter (it runs no launcher)."""

    def __init__(self, on: bool):
        self.on = on
        self._old: Any = None

    def __enter__(self) -> launch_hook:
        if not self.on:
            return self
        try:
            from triton import knobs
        except ImportError:  # pragma: no cover - Triton < 3.4: no knobs; the floor is 3.6
            self.on = False
            return self
        chain = knobs.runtime.launch_enter_hook
        if hasattr(chain, "add"):  # Triton >= 3.5: a HookChain
            chain.add(_hook_launch)
        else:  # a single callable or None
            self._old = chain
            knobs.runtime.launch_enter_hook = _hook_launch
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.on:
            return
        from triton import knobs

        chain = knobs.runtime.launch_enter_hook
        if hasattr(chain, "remove"):
            chain.remove(_hook_launch)
        else:
            knobs.runtime.launch_enter_hook = self._old


def _install_interpreter_hooks() -> dict[str, Any]:
    """TF32-faithful tl.dot and in-launch progress under the interpreter; what got installed, for `runtime`."""
    from . import interp_autotune, interp_compat, interp_libdevice, interp_progress, interp_tf32

    out: dict[str, Any] = {"interpreter_progress": interp_progress.install(), "autotune": interp_autotune.install(),
                           "tensor_index": interp_compat.install(),
                           "bool_splat": interp_compat.install_bool_splat(),
                           "list_grid": interp_compat.install_list_grid(),
                           "range_tensor": interp_compat.install_range_tensor(),
                           "cuda_device": interp_compat.install_cuda_device_noop(),
                           "fp8_rounding": interp_compat.install_fp8_rounding(),
                           "libdevice": interp_libdevice.install()}
    try:
        interp_tf32.install()
        out["tf32_emulation"] = interp_tf32.TF32_OPERAND_ROUNDING  # fp32 dot operands cut to 10 mantissa bits
    except interp_tf32.NotEmulated as e:
        out["tf32_emulation"] = f"TF32 not emulated: {e}"
    return out


@dataclass
class Runtime:
    """What the worker found: device, interpreter mode, versions."""

    device: str
    interpreter: bool
    torch_version: str
    triton_version: str
    gpu_name: str | None
    info: dict[str, Any]


def setup() -> Runtime:
    """Pick the device (CUDA, else Triton's interpreter on CPU), import triton, install the recorder."""
    import torch  # noqa: F401 - importing torch does not import triton, so the env below still applies

    cuda = torch.cuda.is_available()
    if not cuda:
        os.environ["TRITON_INTERPRET"] = "1"
    import triton
    from triton.runtime import autotuner, jit

    _wrap_run(jit.JITFunction, counts=True)
    try:
        from triton.runtime.interpreter import InterpretedFunction

        _wrap_run(InterpretedFunction, counts=True)
    except ImportError:  # pragma: no cover - every Triton 3.x has it
        pass
    _wrap_run(autotuner.Autotuner, counts=False)
    _wrap_run(autotuner.Heuristics, counts=False)
    RECORDER.owner = threading.get_ident()
    RECORDER.interpreter = not cuda
    info: dict[str, Any] = {"python": sys.version.split()[0]}
    if not cuda:
        info.update(_install_interpreter_hooks())
    gpu_name = None
    if cuda:
        props = torch.cuda.get_device_properties(0)
        gpu_name = props.name
        info.update(
            gpu=props.name,
            capability=f"{props.major}.{props.minor}",
            sm_count=props.multi_processor_count,
            total_memory_gib=round(props.total_memory / 2**30, 1),
            cuda=torch.version.cuda,
            cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
        )
    return Runtime(
        device="cuda" if cuda else "cpu",
        interpreter=not cuda,
        torch_version=torch.__version__,
        triton_version=triton.__version__,
        gpu_name=gpu_name,
        info=info,
    )


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()
