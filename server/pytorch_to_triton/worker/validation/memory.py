"""Memory of one validation case: the up-front estimate, the per-case peak, and giving memory back.

Validation keeps at most these live at once (I = inputs, O = outputs in their own dtypes, I64/O64 the same
upcast to float64; see Validator.run_case for the order that makes this true):
    float64 reference     I + I64 + O64            (the upcast inputs are dropped once it returns)
    native reference      I + O64 + I + O          (the copy the reference runs on, and its outputs)
    candidate runs A, B   I + O64 + 2 O            (run B reuses the original inputs; A is kept for B)
    comparison            the above + CHUNK temporaries (compare.py works over bounded slices)
    stale-result check    2 I + 2 O                (the float64 outputs are gone by then)
For fp32 elementwise work (I = O) that is 2.5x the case's inputs + outputs, plus about 0.5 GiB of chunk
temporaries and whatever the reference or candidate allocate internally.
"""

from __future__ import annotations

import contextlib
import gc
import math
import os
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from . import compare as cmp

MARGIN = 1.05  # 5% on top of the counted copies: the allocator rounds blocks up (2 MiB segments)
MARGIN_BYTES = 256 << 20
# A case whose inputs take at most 1/DEFER_FACTOR of the free memory is run before its outputs are known (see
# meta_input_bytes): an fp32 element-wise case needs about 5x its inputs with the float64 copies, so its outputs
# may be about 12x its inputs before that would not fit; a reference whose outputs outgrow that runs out of memory
# and is refused then, with the estimate on fake tensors (Validator._check_memory).
DEFER_FACTOR = 64


@dataclass
class Estimate:
    """Bytes of one case's inputs and outputs, as found without allocating them."""

    inputs: int
    outputs: int
    inputs64: int
    outputs64: int
    params64: int = 0  # KernelBench: the float64 copy of the reference model's parameters
    outputs_guessed: bool = False  # the reference could not run on fake tensors: outputs taken as the inputs
    # Triton's CPU interpreter copies a launch's tensor arguments to host buffers and back: one more I + O while
    # the candidate runs. Dev CPU, swish at 64 MiB io: RSS peak 552 MiB on a warm trial (879 MiB on the first,
    # which includes the interpreter's own start-up), 962 MiB estimated.
    interpreter: bool = False

    def need(self, fp64: bool) -> int:
        """Peak bytes validation of this case needs (see the module docstring)."""
        i, o, i64, o64 = self.inputs, self.outputs, self.inputs64, self.outputs64
        chunk = min(max(o64, 8), cmp.CHUNK_ELEMS * 8) * cmp.CHUNK_TEMPS
        interp = i + o if self.interpreter else 0
        stale = 2 * i + 2 * o + chunk  # fresh values, the reference's and the candidate's outputs on them
        if fp64:
            phases = [i + i64 + o64 + self.params64, 2 * i + o64 + o, i + o64 + 2 * o + max(chunk, interp), stale]
        else:  # the native reference's outputs are what the runs are compared against
            phases = [2 * i + o, i + 3 * o + max(chunk, interp), stale]
        return int(max(phases) * MARGIN) + MARGIN_BYTES

    def bench_need(self, fp64: bool) -> int:
        """Peak bytes run_benchmark needs: the float64 check next to the native outputs, then a candidate's
        outputs while the next call allocates its own, then the after-timing recheck on fresh inputs."""
        i, o, i64, o64 = self.inputs, self.outputs, self.inputs64, self.outputs64
        chunk = min(max(o64, 8), cmp.CHUNK_ELEMS * 8) * cmp.CHUNK_TEMPS
        expect = o64 if fp64 else o
        phases = [i + o + expect + 2 * o + chunk, 2 * i + expect + 2 * o + chunk]
        if fp64:
            phases.append(i + o + i64 + o64)
        return int(max(phases) * MARGIN) + MARGIN_BYTES

    def describe(self) -> str:
        """'inputs 6.00 GiB, outputs 6.00 GiB' for messages."""
        guess = " (guessed: the reference did not run on fake tensors)" if self.outputs_guessed else ""
        return f"inputs {gib(self.inputs)}, outputs {gib(self.outputs)}{guess}"


def gib(n: int | float) -> str:
    """Bytes as '1.23 GiB'."""
    return f"{n / 2**30:.2f} GiB"


def _bytes64(xs: list[Any]) -> int:
    return sum(t.numel() * (8 if t.is_floating_point() else t.element_size()) for t in xs)


@contextlib.contextmanager
def state_kept(model: Any) -> Iterator[None]:
    """Put back what a run assigns to a module and its submodules (attributes, buffers, parameters): a stateful
    reference (KernelBench's VanillaRNN keeps `self.hidden = tanh(...)` from call to call) run on fake tensors must
    not keep fake tensors as its state for the real runs (issue 40's trial: every validation crashed on them)."""
    mods = list(model.modules()) if isinstance(model, torch.nn.Module) else []
    saved = [(m, dict(m.__dict__), dict(m._buffers), dict(m._parameters), dict(m._modules)) for m in mods]
    try:
        yield
    finally:
        for m, attrs, bufs, params, subs in saved:
            for d, old in ((m._buffers, bufs), (m._parameters, params), (m._modules, subs)):
                d.clear()
                d.update(old)
            m.__dict__.clear()
            m.__dict__.update(attrs)


def estimate(make_inputs: Any, reference: Any, device: str, model: Any = None) -> Estimate | None:
    """Input and output bytes of a case, computed on fake tensors (nothing is allocated); None if impossible.

    `make_inputs()` builds the inputs; under torch's FakeTensorMode, torch.randn and `.to('cuda')` return
    tensors without storage, so a KernelBench get_inputs() at 8 GB costs nothing. `reference(inputs)` runs
    the reference on them for the output sizes (real parameters are turned into fake ones); `model`, the reference's
    module when it has one, keeps its state (state_kept)."""
    try:
        from torch._subclasses.fake_tensor import FakeTensorMode
    except ImportError:  # pragma: no cover - every torch >= 2.1 has it
        return None
    from .nest import flatten as _flatten
    from .nest import tensors as _tensors

    try:
        with state_kept(model), FakeTensorMode(allow_non_fake_inputs=True):
            inputs = _tensors(_flatten(make_inputs()))
            outs: list[torch.Tensor] | None
            try:
                with torch.no_grad():
                    outs = _tensors(_flatten(reference(inputs)))
            except Exception:  # noqa: BLE001 - data-dependent shapes, .item(), a Triton call: guess below
                outs = None
    except Exception:  # noqa: BLE001 - the inputs cannot be built on fake tensors: no estimate
        return None
    i = sum(t.numel() * t.element_size() for t in inputs)
    if outs is None:
        return Estimate(i, i, _bytes64(inputs), _bytes64(inputs), outputs_guessed=True)
    return Estimate(i, sum(t.numel() * t.element_size() for t in outs), _bytes64(inputs), _bytes64(outs))


def dynamo_loaded() -> bool:
    """Whether torch._dynamo is imported (and done importing). FakeTensorMode imports it on first use, and so does
    the first meta-device op of many kinds (torch._refs wrap them in torch._disable_dynamo): 1.5 s on the dev CPU,
    3.9 s on the H200 (issue 28), so a worker imports it after its first request (worker/__main__.py)."""
    return getattr(sys.modules.get("torch._dynamo"), "disable", None) is not None


def meta_input_bytes(make_inputs: Any) -> int | None:
    """Bytes of a case's inputs built on the meta device (nothing allocated) without FakeTensorMode and without
    importing torch._dynamo; None when make_inputs cannot build them so (it computes on its tensors, moves them to
    a device, or allocates something real): the caller then estimates on fake tensors."""
    from .nest import flatten as _flatten
    from .nest import tensors as _tensors

    block = "torch._dynamo" not in sys.modules
    if block:  # an import of torch._dynamo now raises ImportError: a make_inputs that would need it gives None
        sys.modules["torch._dynamo"] = None  # type: ignore[assignment]
    try:
        with torch.device("meta"):  # torch.randn(n) without a device is a meta tensor too, never a real one
            xs = _tensors(_flatten(make_inputs()))
        if any(t.device.type != "meta" for t in xs):
            return None
        return sum(t.numel() * t.element_size() for t in xs)
    except Exception:  # noqa: BLE001 - anything make_inputs cannot do on meta tensors: estimate on fake ones
        return None
    finally:
        if block and "torch._dynamo" in sys.modules and sys.modules["torch._dynamo"] is None:
            del sys.modules["torch._dynamo"]


def real_estimate(inputs: list[Any], out_meta: list[tuple[Any, ...]], interpreter: bool) -> Estimate:
    """The estimate of a case that ran: its inputs, and its reference's outputs as (shape, dtype, device, is_tensor)
    (what estimate() finds on fake tensors, from the real sizes)."""
    from .nest import flatten as _flatten
    from .nest import tensors as _tensors

    xs = _tensors(_flatten(inputs))
    outs = [(math.prod(shape), dtype) for shape, dtype, _, is_tensor in out_meta if is_tensor]
    size = [torch.empty((), dtype=d).element_size() for _, d in outs]
    return Estimate(sum(t.numel() * t.element_size() for t in xs), sum(n * b for (n, _), b in zip(outs, size)),
                    _bytes64(xs), sum(n * (8 if d.is_floating_point else b) for (n, d), b in zip(outs, size)),
                    interpreter=interpreter)


def free_bytes(device: str) -> tuple[int, str]:
    """(bytes free for this case, where) on the device: CUDA memory incl. torch's cache, or host memory."""
    if device == "cuda":
        allocated, _, reserved = cuda_bytes()
        return torch.cuda.mem_get_info()[0] + reserved - allocated, "GPU memory"
    free, where = _mem_available(), "host memory"
    limit = int(os.environ.get("P2T_WORKER_MEMORY_BYTES") or 0)  # set by the server (worker_client.Limits)
    if limit and limit - _rss_self() < free:
        free, where = max(0, limit - _rss_self()), "host memory under the worker's memory limit"
    return free, where


def is_oom(e: BaseException) -> bool:
    """True for an out-of-memory error, on the GPU or from the CPU allocator."""
    if isinstance(e, (torch.OutOfMemoryError, MemoryError)):
        return True
    return isinstance(e, RuntimeError) and ("can't allocate memory" in str(e) or "out of memory" in str(e))


def forget(e: BaseException) -> None:
    """Drop the locals of every finished frame an exception's traceback holds (tensors of the call that raised)."""
    seen: set[int] = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        traceback.clear_frames(e.__traceback__)
        e = e.__cause__ or e.__context__  # type: ignore[assignment]


def release(device: str) -> None:
    """Collect cycles (exceptions, frames) and give torch's cached blocks back to the driver."""
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()


def cuda_bytes() -> tuple[int, int, int]:
    """(allocated now, allocated peak, reserved now) of torch's caching allocator on the current device, from one
    read of its nested statistics: torch.cuda.memory_allocated() and friends each flatten the whole statistics
    dict in Python, and a validation read them four times per case."""
    try:
        st = torch._C._cuda_memoryStats(torch.cuda.current_device())
        return (int(st["allocated_bytes"]["all"]["current"]), int(st["allocated_bytes"]["all"]["peak"]),
                int(st["reserved_bytes"]["all"]["current"]))
    except (AttributeError, KeyError, TypeError):  # another torch's layout: the public (slower) calls
        return torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated(), torch.cuda.memory_reserved()


def allocated(device: str) -> int | None:
    """Bytes torch has allocated on the device now (None on CPU: the host has no such counter)."""
    return cuda_bytes()[0] if device == "cuda" else None


class CaseProbe:
    """Peak memory of one case: CUDA's max_memory_allocated, or on CPU the peak RSS (VmHWM after a reset)."""

    def __init__(self, device: str, extra: int = 0):
        self.device = device
        self.extra = extra  # inputs handed in already allocated (variants) belong to the case too
        if device == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            self.start = cuda_bytes()[0]
        else:
            self.start = _rss_self()
            self.hwm_ok = _reset_hwm()

    def finish(self) -> dict[str, Any]:
        """{'peak_mem_bytes': ..., 'peak_mem_source': ...} for the case record."""
        if self.device == "cuda":
            torch.cuda.synchronize()
            peak = cuda_bytes()[1] - self.start + self.extra
            return {"peak_mem_bytes": int(peak), "peak_mem_source": "cuda max_memory_allocated"}
        hwm = _hwm() if self.hwm_ok else None
        if hwm is None:
            return {"peak_mem_bytes": None, "peak_mem_source": "unavailable (no /proc/self/clear_refs)"}
        return {"peak_mem_bytes": max(0, hwm - self.start) + self.extra,
                "peak_mem_source": "host RSS high-water mark (includes the interpreter's own buffers)"}


def _reset_hwm() -> bool:
    # Writing 5 to clear_refs resets VmHWM to the current RSS (Linux >= 4.0), so the peak is per case.
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _hwm() -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _rss_self() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _mem_available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 << 30
