"""Where a caller runs while callers.py records its call: a time limit, a cap on the tensors it builds under the
interpreter, the process state it may change put back, and, under Triton's CPU interpreter, the stand-ins that let
code written for a GPU reach its first call.

Stand-ins (interpreter only, for the caller's run, never for the probes): a device 'cuda' given to a torch factory,
`.to()` or `.cuda()` means the CPU (the interpreter's device); `torch.cuda.synchronize` does nothing; Triton's
`driver.active`, which raises with no GPU ("0 active drivers"), answers the device (cpu), the current device (0) and a
CUDA target, so the tutorials' `DEVICE = triton.runtime.driver.active.get_active_torch_device()` imports;
`triton.testing.do_bench(fn)` calls fn once (its first call is the one recorded; timing means nothing here). What a
caller needs beyond these (the device's properties, `kernel.warmup`) fails, and the caller is reported unusable.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import torch

from .. import alarm

# The example's tensors, under the interpreter (callers.py checks the recorded call). Its cost is per program, not
# per element: measured here (Triton 3.9, 2 shared cores) 30-50 ms per program of layer norm at any block size, so the
# tutorial's own 1151 x 8192 call took 90 s and left the probes (~20 calls) no time; 2**17 elements keeps an example
# near a few seconds (vector add's 98432: 96 programs; layer norm at 16 x 8192). callers.py shrinks a caller over it
# through its own first size argument above 1, or refuses it.
MAX_ELEMENTS = 1 << 17
# Any tensor a caller builds under the interpreter (its references, its buffers): 2**26 elements (256 MiB of
# float32). liger-kernel's int32-overflow tests build 2**23 x 256 and are refused before they allocate.
FACTORY_CAP = 1 << 26
FACTORIES = ("empty", "zeros", "ones", "full", "rand", "randn", "randint", "randperm", "arange", "linspace", "tensor",
             "as_tensor", "eye", "empty_strided", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
             "randn_like", "randint_like", "normal")


class CallerStopped(BaseException):
    """Raised into a caller to stop it (a BaseException, so the caller's own `except Exception` cannot swallow it)."""


class CallerTimeout(CallerStopped):
    pass


class TooLarge(CallerStopped):
    def __init__(self, message: str, n: int) -> None:
        super().__init__(message)
        self.n = n  # the elements of the tensor refused


@contextlib.contextmanager
def caller_env(interpreter: bool, timeout_s: float) -> Iterator[None]:
    """The caller's run: time limit, state kept, and the interpreter's stand-ins (module docstring)."""
    with _kept_state(), _time_limit(timeout_s), (_stand_ins(FACTORY_CAP) if interpreter else contextlib.nullcontext()):
        yield


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """CallerTimeout after `seconds` (alarm.py: SIGALRM, only on the main thread, where the worker serves requests)."""
    with alarm.time_limit(seconds, lambda: CallerTimeout(f"still running after {seconds:.0f} s (the caller's time "
                                                         "limit)")):
        yield


@contextlib.contextmanager
def _kept_state() -> Iterator[None]:
    """What a test module changes for the whole process (liger's tests: torch.use_deterministic_algorithms(True),
    CUBLAS_WORKSPACE_CONFIG), put back after the caller: later calls in this worker see the state they had."""
    env, argv = dict(os.environ), list(sys.argv)
    det, det_warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    dtype, grad = torch.get_default_dtype(), torch.is_grad_enabled()
    tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    rng = torch.get_rng_state()
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(env)
        sys.argv[:] = argv
        torch.use_deterministic_algorithms(det, warn_only=det_warn)
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(grad)
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = tf32
        torch.set_rng_state(rng)


def _cpu(d: Any) -> Any:
    """'cuda', 'cuda:0', torch.device('cuda') -> 'cpu'; anything else unchanged."""
    if isinstance(d, torch.device) and d.type == "cuda":
        return torch.device("cpu")
    if isinstance(d, str) and d.split(":")[0] == "cuda":
        return "cpu"
    if isinstance(d, int) and not isinstance(d, bool):  # .to(0), .cuda(0): a device index
        return "cpu"
    return d


def _numel(shape: Any) -> int | None:
    try:
        if isinstance(shape, (tuple, list, torch.Size)) and all(isinstance(s, int) for s in shape):
            return math.prod(shape)
    except TypeError:
        return None
    return None


def _check(name: str, args: tuple[Any, ...], kwargs: dict[str, Any], cap: int) -> None:
    """TooLarge before a factory builds a tensor over `cap` elements (its size read from the usual arguments)."""
    size = kwargs.get("size")
    if size is None and name in ("empty", "zeros", "ones", "rand", "randn", "full"):
        size = args[0] if len(args) == 1 or name == "full" else args
    elif size is None and name == "randint":
        size = next((a for a in args if isinstance(a, (tuple, list, torch.Size))), None)
    n = _numel(size if not isinstance(size, int) else (size,)) if size is not None else None
    if n is not None and n > cap:
        raise TooLarge(f"it builds a tensor of {n:,} elements (torch.{name}), more than the interpreter's cap of "
                       f"{cap:,} for a caller's tensors: give harness= at a smaller size, or run on a GPU", n)


def _factory(name: str, fn: Callable[..., Any], cap: int) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if "device" in kwargs:
            kwargs["device"] = _cpu(kwargs["device"])
        _check(name, args, kwargs, cap)
        out = fn(*args, **kwargs)
        if isinstance(out, torch.Tensor) and out.numel() > cap:
            raise TooLarge(f"it builds a tensor of {out.numel():,} elements (torch.{name}), more than the "
                           f"interpreter's cap of {cap:,} for a caller's tensors: give harness= at a smaller size, or "
                           "run on a GPU", out.numel())
        return out

    return wrapped


def _to(fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        args = tuple(_cpu(a) for a in args)
        if "device" in kwargs:
            kwargs["device"] = _cpu(kwargs["device"])
        return fn(self, *args, **kwargs)

    return wrapped


class _Target:
    backend, arch, warp_size = "cuda", 80, 32


class _CpuDriver:
    """Triton's active driver as a caller written for a GPU asks it, answered for the interpreter's CPU."""

    def get_active_torch_device(self) -> torch.device:
        return torch.device("cpu")

    def get_current_device(self) -> int:
        return 0

    def get_current_target(self) -> _Target:
        return _Target()


def _do_bench(fn: Callable[[], Any], *_a: Any, quantiles: Any = None, **_k: Any) -> Any:
    fn()  # the caller's first call is what is recorded; no timing under the interpreter
    return [1.0] * len(quantiles) if quantiles else 1.0


@contextlib.contextmanager
def _stand_ins(cap: int) -> Iterator[None]:
    """The interpreter's stand-ins for a caller written for a GPU (module docstring), removed afterwards."""
    import triton.testing

    try:
        from triton.runtime.driver import driver as cfg  # the DriverConfig (triton.runtime exports it as `driver`)
    except ImportError:
        cfg = None

    saved: list[tuple[Any, str, Any]] = []

    def put(owner: Any, name: str, value: Any) -> None:
        saved.append((owner, name, owner.__dict__.get(name, _MISSING) if isinstance(owner, type)
                      else getattr(owner, name, _MISSING)))
        setattr(owner, name, value)

    for name in FACTORIES:
        if hasattr(torch, name):
            put(torch, name, _factory(name, getattr(torch, name), cap))
    put(torch.Tensor, "to", _to(torch.Tensor.to))
    put(torch.Tensor, "cuda", lambda self, *a, **k: self)
    put(torch.nn.Module, "to", _to(torch.nn.Module.to))
    put(torch.nn.Module, "cuda", lambda self, *a, **k: self)
    for name in ("synchronize", "empty_cache"):
        put(torch.cuda, name, lambda *a, **k: None)
    put(triton.testing, "do_bench", _do_bench)
    active = getattr(cfg, "_active", _MISSING)
    try:
        _ = cfg.active  # type: ignore[union-attr]
        active = _MISSING  # a real driver is active: keep it
    except Exception:  # noqa: BLE001 - "0 active drivers" under the interpreter: stand in for it
        if cfg is not None and hasattr(cfg, "set_active"):
            cfg.set_active(_CpuDriver())
    try:
        yield
    finally:
        for owner, name, old in reversed(saved):
            if old is _MISSING:
                with contextlib.suppress(AttributeError):
                    delattr(owner, name)
            else:
                setattr(owner, name, old)
        if active is not _MISSING and cfg is not None:
            cfg._active = active


_MISSING = object()
