"""What a worker does before its first request, so that request finds everything loaded (issue 28: the first
call under 6 s).

The server starts the worker while the MCP client initializes (WorkerPool.prestart) and keeps a warm spare; both
sit idle until a request comes. Work that every first validation would otherwise do is moved here:
- the harness's own modules (validate, kernelbench, bench and what they import), which _dispatch imports lazily;
- one Triton launch of a small kernel: Triton's compiler and backend modules, the driver's C helpers (built with
  the host compiler the first time a Triton cache directory is used) and a launcher for the commonest signature
  of a first task (three fp32 pointers and an int: an element-wise kernel); the workspace's Triton cache keeps
  them for the next server;
- the comparison's tensor ops once on the device (CUDA loads each kernel module on its first use).
`import torch._dynamo` is not among them: it took 3.9 s of the H200 worker's 8.6 s start-up (1.5 s on the dev CPU),
and a validation of a make_inputs reference no longer needs it (the memory estimate runs such a case before its
estimate while dynamo is not loaded, validate.py; the op recorder no longer imports it, guards.py). The worker
imports it once it has answered its first request and nothing else is waiting (`dynamo_later`), for what does need
it: fake tensors of KernelBench problems and larger cases, torch.compile baselines, FLOP counts.
Each step is timed; `startup()` returns the times, which the worker reports in its runtime info. A step that fails
only costs the first request that time again: nothing here may stop the worker from serving. No torch or triton
import at module level: the worker imports this before runtime.setup picks the interpreter or the GPU.
"""

from __future__ import annotations

import os
import time
from typing import Any


def process_age_s() -> float | None:
    """Seconds since this process started (Linux /proc), None elsewhere."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return round(uptime - start_ticks / os.sysconf("SC_CLK_TCK"), 3)
    except (OSError, ValueError, IndexError):
        return None


class StepTimer:
    """Seconds per named start-up step (`times`: '<name>_s', or '<name>_error' when it raised), in order."""

    def __init__(self) -> None:
        self.times: dict[str, Any] = {}

    def mark(self, name: str, value: Any) -> None:
        """Record a value as it is (a process age)."""
        self.times[name] = value

    def step(self, name: str) -> Any:
        """A context manager that times its block as '<name>_s'; exceptions propagate."""
        import contextlib

        @contextlib.contextmanager
        def timed() -> Any:
            t0 = time.perf_counter()
            try:
                yield
            finally:
                self.times[f"{name}_s"] = round(time.perf_counter() - t0, 3)

        return timed()


def _dynamo() -> None:
    import torch._dynamo  # noqa: F401
    import torch._subclasses.fake_tensor  # noqa: F401


def dynamo_later(patches: Any) -> dict[str, Any]:
    """Import torch._dynamo in a worker that has served a request and is idle; {'dynamo_import_idle_s': ...}.
    The import rebinds some torch functions (torch.manual_seed to a functools.wraps wrapper): PatchWatch takes
    them into its snapshot now (guards._torch_rewrap), so that no candidate is blamed for them; anything else it
    would restore is named in 'dynamo_import_patched'. The new objects are frozen like the start-up's (gc)."""
    import gc

    t0 = time.perf_counter()
    out: dict[str, Any] = {}
    try:
        _dynamo()
        patched = patches.check_and_restore()
        if patched:
            out["dynamo_import_patched"] = patched
        out["dynamo_import_idle_s"] = round(time.perf_counter() - t0, 3)
    except Exception as e:  # noqa: BLE001 - whatever needs dynamo imports it then
        out["dynamo_import_error"] = f"{type(e).__name__}: {str(e)[:200]}"
    gc.collect()
    gc.freeze()
    return out


def _harness() -> None:
    from .benchmark import bench  # noqa: F401
    from .validation import validate  # noqa: F401 - imported for the first request


def _triton_launch(device: str) -> None:
    import torch

    from .device.prewarm_kernel import prewarm_add_kernel
    from .device.runtime import RECORDER

    x = torch.arange(100, dtype=torch.float32, device=device)
    out = torch.empty_like(x)
    prewarm_add_kernel[(1,)](x, x, out, x.numel(), BLOCK=128)
    if device == "cuda":
        torch.cuda.synchronize()
    if not torch.equal(out, x + x):
        raise RuntimeError("the prewarm kernel computed a wrong sum")
    RECORDER.reset()  # not a user's launch: no report may list it
    RECORDER.compiled.pop("prewarm_add_kernel", None)


def _compare_ops(device: str) -> None:
    import torch

    from .validation import compare as cmp

    for dtype in (torch.float32, torch.bfloat16):
        a = torch.randn(1000, device=device).to(dtype)
        ref = a.double()
        cmp.compare(a, ref, 1e-4, 1e-4)
        cmp.compare(a, ref, 1e-4, 1e-4, own=cmp.own_error(a, ref), second=a, poison=(float("nan"), -7777.0))
        cmp.unwritten(a, a, float("nan"), -7777.0)
        cmp.same_within_rounding(a, a)
        cmp.same_bits([a], [a.clone()])
        cmp.fingerprint(a)


def startup(device: str) -> dict[str, Any]:
    """Run every step; seconds per step (or the step's error), and the process age when done."""
    out: dict[str, Any] = {"process_age_at_prewarm_s": process_age_s()}
    for name, step in (("harness_import", _harness),
                       ("triton_launch", lambda: _triton_launch(device)),
                       ("compare_ops", lambda: _compare_ops(device))):
        t0 = time.perf_counter()
        try:
            step()
            out[f"{name}_s"] = round(time.perf_counter() - t0, 3)
        except Exception as e:  # noqa: BLE001 - a step that fails is just not warm; the worker still serves
            out[f"{name}_error"] = f"{type(e).__name__}: {str(e)[:200]}"
    out["process_age_ready_s"] = process_age_s()
    return out
