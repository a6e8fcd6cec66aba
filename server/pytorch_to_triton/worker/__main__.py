"""Worker entry point: `python -m pytorch_to_triton.worker REQ_FD RES_FD` (see protocol.py)."""

from __future__ import annotations

import faulthandler
import gc
import json
import os
import signal
import sys
import traceback
from typing import Any


def main() -> int:
    """Serve requests until shutdown or EOF."""
    req_fd, res_fd = int(sys.argv[1]), int(sys.argv[2])
    os.dup2(2, 1)  # user prints go to stderr, which the server caps; fd res_fd is protocol only
    sys.stdout = sys.stderr
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
    # A segfault prints the Python stack (user file:line) to stderr, which the server keeps; SIGUSR1 (sent by
    # the server before it kills a worker that timed out) prints every thread's stack the same way.
    faulthandler.enable(all_threads=True)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    _become_subreaper()
    from .prewarm import StepTimer, process_age_s

    steps = StepTimer()  # where a fresh worker's start-up goes (runtime.startup_s; benchmarks/latency.py prints it)
    steps.mark("process_age_at_main_s", process_age_s())
    from .confine import sandbox
    from .device import gpu_first

    # A worker started for a GPU initialises CUDA before it confines itself: on the H200 (2026-12-04, driver
    # 580.159.04) cuInit under the ruleset failed with error 304 ("OS call failed"), and the worker then ran
    # everything under the interpreter. No user file is imported before confine; the threads that exist before it
    # (the CUDA driver's, BLAS's) run no user code, and every thread user code can start inherits the ruleset.
    with steps.step("cuda_init"):  # import torch, the CUDA context, Triton's driver (GPU workers only)
        cuda_error = gpu_first.init_cuda() if os.environ.get("P2T_WORKER_GPU") == "1" and sandbox.wanted() else None
    with steps.step("confine"):
        sandbox_summary = sandbox.confine(os.getcwd()).summary
    zygote = _fork_compile_zygote(steps, (req_fd, res_fd))
    # After confine too: this thread runs Python that a candidate could rebind (os.getppid).
    _exit_when_orphaned()

    from ..protocol import write_message

    if zygote:  # the first message, before any request is read: the server spares this pid (sandbox_host.after_call)
        write_message(res_fd, {"type": "zygote", "pid": zygote})

    with steps.step("import_runtime"):  # torch and Triton, when cuda_init did not import them
        from .device.runtime import setup
        from .validation import poison

    steps.mark("process_age_at_setup_s", process_age_s())
    with steps.step("setup"):
        rt = setup()
        poison.install()
    rt.info["startup_s"] = steps.times
    steps.times.update(_prewarm(rt))
    rt.info["sandbox"] = sandbox_summary + ("; CUDA initialised before confinement" if rt.device == "cuda" and
                                            os.environ.get("P2T_WORKER_GPU") == "1" and sandbox.wanted() else "")
    if os.environ.get("P2T_WORKER_GPU") == "1" and rt.device != "cuda":  # never a silent fall back to the interpreter
        rt.info["gpu_missing"] = (f"this worker was started for a GPU but CUDA did not initialise in it "
                                  f"({cuda_error or 'torch.cuda.is_available() is False'}): everything ran under "
                                  "Triton's CPU interpreter. If the sandbox blocks the driver, run with --no-sandbox "
                                  "(P2T_SANDBOX=0) and report it")
    from .validation.memory import allocated

    _BASELINE["allocated"] = allocated(rt.device)  # what torch holds before any request (0 on a fresh context)
    with steps.step("patch_snapshot"):
        from .validation import run_validation  # noqa: F401 - loaded before the snapshot: PatchWatch watches the case runners
        from .validation.guards import PatchWatch

        patches = PatchWatch()
    # What is loaded now lives as long as the worker: frozen, the collection after every call (memory.release)
    # scans only what calls create (350 ms -> under 1 ms per call on the dev CPU with torch loaded). No collection
    # first: it took 0.25-0.33 s of a fresh worker's start on the dev CPU, in front of the first answer (issue 47), to
    # free a little import-time garbage; dynamo_later collects and freezes again once the worker is idle.
    with steps.step("gc_freeze"):
        gc.freeze()
    steps.mark("process_age_serving_s", process_age_s())
    reader = os.fdopen(req_fd, "rb", buffering=0)
    buf = b""
    served, dynamo_due = 0, True
    while True:
        if dynamo_due and served and b"\n" not in buf and _idle(req_fd, DYNAMO_IDLE_S):
            from .prewarm import dynamo_later

            rt.info["startup_s"].update(dynamo_later(patches))  # after the first answer (prewarm.py)
            dynamo_due = False
        chunk = reader.read(1 << 16)
        if not chunk:
            return 0
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if not line.strip():
                continue
            req = json.loads(line)
            if req.get("op") == "shutdown":
                return 0
            # An illegal address or device assert poisons the CUDA context for good: _serve then answers
            # with worker_exiting and this process exits, so the server starts a fresh one for the next call.
            _serve(req, rt, patches, res_fd, write_message)
            served += 1


DYNAMO_IDLE_S = 0.3  # quiet this long after an answer before importing torch._dynamo (prewarm.dynamo_later)


def _idle(fd: int, seconds: float) -> bool:
    """True when no request arrives on fd within `seconds`."""
    import select

    try:
        return not select.select([fd], [], [], seconds)[0]
    except (OSError, ValueError):
        return False


def _prewarm(rt: Any) -> dict[str, Any]:
    """Do now what the first request would do (worker/prewarm.py), so a worker started ahead of its first call
    (the prestarted one, the warm spare) answers that call sooner. Before PatchWatch: the snapshot is of what
    the prewarm loaded. Returns the steps' times."""
    try:
        from .prewarm import startup

        return startup(rt.device)
    except Exception as e:  # noqa: BLE001 - never stop the worker: the first call does what is missing
        return {"error": f"{type(e).__name__}: {e}"}


def _fork_compile_zygote(steps: Any, protocol_fds: tuple[int, int]) -> int | None:
    """A CPU worker's compile zygote (device/compile_zygote.py): forked once torch is imported, before Triton's
    interpreter, any patch or any user file; its pid. GPU workers compile for real at launch: none."""
    if os.environ.get("P2T_WORKER_GPU") == "1":
        return None
    import warnings

    with steps.step("compile_zygote"):
        import torch  # noqa: F401 - what every compile child would import first: the zygote's children share it

        from .device import compile_zygote

        with warnings.catch_warnings():  # Python 3.12 warns of fork in a threaded process: the zygote forks
            warnings.simplefilter("ignore", DeprecationWarning)  # before any user code, it runs ours only
            return compile_zygote.start(protocol_fds)


def _exit_when_orphaned() -> None:
    """If the server dies (even by SIGKILL) while user code runs, kill our whole group: no orphan worker may
    keep the GPU busy under the next session's timings."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                try:
                    os.killpg(os.getpgid(0), signal.SIGKILL)
                finally:
                    os._exit(18)

    threading.Thread(target=watch, name="p2t-orphan-watch", daemon=True).start()


def _become_subreaper() -> None:
    # Orphans of user code (a double-forked daemon) are re-parented to us instead of init, so the server still
    # finds them among our descendants and kills them with us.
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER (Linux)
    except (OSError, AttributeError):
        pass


def _cuda_healthy() -> bool:
    import torch

    try:
        torch.cuda.synchronize()
        torch.zeros(1, device="cuda").add_(1).item()
        return True
    except Exception:  # noqa: BLE001
        return False


def _serve(req: dict[str, Any], rt: Any, patches: Any, res_fd: int, write: Any) -> None:
    rid = req.get("id", 0)

    def emit(kind: str, **fields: Any) -> None:
        write(res_fd, {"id": rid, "type": kind, **fields})

    from .device.interp_progress import TRACKER

    emit = TRACKER.bind(emit)  # programs done inside a launch (interpreter) ride on this request's channel

    from .confine import sandbox
    from .validation import memory
    from .validation.tasks import TaskError

    before = memory.allocated(rt.device)
    sandbox.begin_call()
    prof = _profiler()
    try:
        if prof is not None:
            prof.enable()
        try:
            result = _dispatch(req.get("op", ""), req.get("args") or {}, rt, patches, emit)
        finally:
            if prof is not None:
                prof.disable()
                _dump_profile(prof, rid)
        result.setdefault("runtime", _runtime_info(rt))
        msg: dict[str, Any] = {"id": rid, "type": "result", "result": result}
    except TaskError as e:
        msg = {"id": rid, "type": "error", "error": {"usage": e.usage, "phase": e.phase,
                                                     "type": "TaskError", "message": str(e)}}
        memory.forget(e)
    except Exception as e:  # noqa: BLE001 - anything else is reported, the worker stays up
        msg = {"id": rid, "type": "error", "error": {
            "phase": "worker", "type": type(e).__name__, "message": f"{e}\n{traceback.format_exc()[-3000:]}"}}
        poisoned = _poisoned(e)  # a fatal CUDA error in one case (case_log.py), maybe hidden by a later one
        if poisoned is not None:
            msg["error"].update(type=poisoned.__class__.__name__, message=str(poisoned), case=poisoned.case,
                                case_phase=poisoned.phase)
        memory.forget(e)  # the frames of the failed call hold its tensors
    sandbox.end_call()
    # Decide before answering: a poisoned CUDA context means this worker must go, and the server has to know
    # that before it sends the next request (otherwise that request races with our exit and is lost).
    exiting = rt.device == "cuda" and not _cuda_healthy()
    if exiting:
        msg["worker_exiting"] = True
    else:
        # Everything the call allocated goes back; the server replaces this worker when memory stays above
        # the baseline (a candidate's module-level cache, a leak), so no call can fail because of an earlier one.
        msg["memory"] = {"baseline": _BASELINE.get("allocated"), "before": before, **_release(rt, req.get("op"))}
        if "result" in msg:
            msg["result"]["worker_memory"] = msg["memory"]
    write(res_fd, msg)
    if exiting:
        os._exit(17)


_BASELINE: dict[str, Any] = {}


def _profiler() -> Any:
    """A cProfile.Profile around each request when P2T_WORKER_PROFILE names a directory (benchmarks/explore/worker_gap.py;
    run with P2T_SANDBOX=0, or the ruleset refuses writes there), else None."""
    if not os.environ.get("P2T_WORKER_PROFILE"):
        return None
    import cProfile

    return cProfile.Profile()


def _dump_profile(prof: Any, rid: Any) -> None:
    try:
        prof.dump_stats(os.path.join(os.environ["P2T_WORKER_PROFILE"], f"worker-{os.getpid()}-{rid}.prof"))
    except OSError:
        pass


def _poisoned(exc: BaseException) -> Any:
    """The ContextPoisoned in an exception's chain (a cleanup's CUDA error may have replaced it), else None."""
    from .validation.case_log import ContextPoisoned

    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, ContextPoisoned):
            return e
        seen.add(id(e))
        e = e.__context__ or e.__cause__
    return None


# GPU memory torch's caching allocator may keep reserved (cached, free) between calls. Emptying the cache after every
# call made each warm call allocate from scratch (a cudaMalloc/cudaFree per tensor): the suspect for the worker's
# warm validation costing twice the in-process one on the H200 (132.5 vs 64.9 ms, issue 28; 160 vs 85 ms on the H100,
# issue 47). A small problem's blocks stay; a big case's (more than this) still go back, so the next call, the spare
# worker and the memory estimate (which counts cached blocks as free, memory.free_bytes) see the GPU as before.
KEEP_CACHED_BYTES = 1 << 30


def _release(rt: Any, op: str | None) -> dict[str, Any]:
    """Drop what the call left behind (the user's modules, compiled graphs, large cached blocks); measure what
    stays."""
    from .validation import memory

    for name in [n for n in sys.modules if n.startswith("p2t_")]:  # tasks.load_module's names for user files
        del sys.modules[name]
    from .confine.refseal import forget

    forget()  # the reference's seal holds its module
    if op in ("benchmark", "explain") and "torch._dynamo" in sys.modules:
        try:
            sys.modules["torch._dynamo"].reset()  # torch.compile's caches hold the reference's parameters
        except Exception:  # noqa: BLE001 - a dynamo that cannot reset leaves memory behind; the server sees it
            pass
    sys.last_type = sys.last_value = sys.last_traceback = None
    if hasattr(sys, "last_exc"):
        sys.last_exc = None
    if rt.device != "cuda":
        memory.release(rt.device)
        return {"after": memory.allocated(rt.device)}
    gc.collect()
    allocated, _, reserved = memory.cuda_bytes()
    if reserved - allocated > KEEP_CACHED_BYTES or os.environ.get("P2T_EMPTY_CACHE_EACH_CALL") == "1":
        memory.release(rt.device)  # gc again (cheap: frozen) and torch.cuda.empty_cache()
        allocated, _, reserved = memory.cuda_bytes()
    return {"after": allocated, "reserved_after": reserved}


def _runtime_info(rt: Any) -> dict[str, Any]:
    from .validation.memory import dynamo_loaded

    return {"device": rt.device, "interpreter": rt.interpreter, "torch": rt.torch_version,
            "triton": rt.triton_version, "gpu": rt.gpu_name, **rt.info,
            "dynamo_loaded": dynamo_loaded()}  # torch._dynamo imported by now (prewarm.dynamo_later)


def _dispatch(op: str, args: dict[str, Any], rt: Any, patches: Any, emit: Any) -> dict[str, Any]:
    if op == "ping":
        return {"pong": True}
    if op == "validate":
        from .validation.run_validation import validate_candidate

        return validate_candidate(args, rt, emit, patches)
    if op == "benchmark":
        from .benchmark.bench import run_benchmark

        return run_benchmark(args, rt, emit, patches)
    if op == "explain":  # run_benchmark explain=true without a GPU: torch.compile's plan, no timings
        from .benchmark.explain import explain_reference

        return explain_reference(args, rt, emit, patches)
    if op == "compiled":
        from .benchmark.bench import compiled_analysis

        return compiled_analysis(args, rt, emit, patches)
    if op == "estimate":  # run_benchmark without a GPU: a roofline estimate from the interpreter's counts
        from .benchmark.estimate import estimate_candidate

        return estimate_candidate(args, rt, emit, patches)
    if op == "probe":  # audit_kernel: run the entry on inputs that expose its static suspects
        from .probe.probes import run_probes

        return run_probes(args, rt, emit, patches)
    if op == "kernelbench_check":  # run_suite: KernelBench's plain criterion beside our verdict
        from .validation.kb_criterion import kernelbench_check

        return kernelbench_check(args, rt, emit, patches)
    raise ValueError(f"unknown op {op!r}")


if __name__ == "__main__":
    sys.exit(main())
