"""Spawn, keep warm, watch and kill worker processes; one warm worker per slot.

User code runs only in the worker (``python -m pytorch_to_triton.worker``). The worker starts in its
own session (process group) and is a child subreaper, so a timeout, cancel or limit kills everything it
spawned: its group and every descendant, also one that called setsid. After a crash the slot starts a
fresh worker on the next call: a poisoned CUDA context dies with its process. docs/FAULTS.md has the list.
"""

from __future__ import annotations

import collections
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import peaks_store, protocol, sandbox_host
from .errors import UsageError, WorkerError
from .trial_progress import ProgressWatch

EventCallback = Callable[[dict[str, Any]], None]

# Environment variables the worker may inherit; everything else (tokens, keys) is dropped.
ENV_ALLOW = {
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "SHELL",
    "PYTHONPATH", "VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
    "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES",
    "P2T_WORKER_PROFILE",  # worker/__main__.py: a cProfile per request (benchmarks/explore/worker_gap.py)
    "P2T_EMPTY_CACHE_EACH_CALL",  # worker/__main__.py: empty torch's CUDA cache after every call (latency.py compares)
    # The compilers Triton (its launchers, CC) and Inductor (CXX) run: the worker's Triton must use the one the user's
    # Triton would, and the sandbox allows exec of exactly that one (worker/confine/toolchain.py). Passed only when they name
    # an executable (scrubbed_env): Triton runs CC as one path, so "ccache gcc" would break every launcher build.
    "CC", "CXX",
    "P2T_TARGET_GPUS",  # worker/device/target_compile.py: a project's default target GPUs (the service passes its own too)
    "P2T_DUMP_LAUNCH_SPECS",  # worker/device/target_compile.py: each launch's specialisation to a folder (compile_agreement)
}
ENV_ALLOW_PREFIXES = ("TRITON_", "LC_", "NCCL_", "CUBLAS_", "CUDNN_", "PYTORCH_")
STDERR_TAIL_BYTES = 64 * 1024
MAX_WORKER_PROCESSES = 64  # a fork bomb is killed when the worker's group grows past this
# GPU memory a worker may keep allocated after a call (torch's own small state, a candidate's tiny cache) before
# the server replaces it; a 1-8 GB case left behind is far above this.
MEMORY_SLACK_BYTES = 64 << 20


@dataclass

class Limits:
    """Resource limits of one worker."""

    memory_bytes: int = 0  # host RSS limit; 0 = 60% of RAM
    max_processes: int = MAX_WORKER_PROCESSES
    cpu_address_space: bool = True  # RLIMIT_AS on CPU-only workers (CUDA needs a huge address space)
    # A warm standby worker (torch and Triton already imported) per slot, started once the first worker has
    # answered, so that a crash, timeout or poisoned CUDA context costs a CUDA init, not a cold start.
    spare: bool = field(default_factory=lambda: os.environ.get("P2T_SPARE_WORKER", "1") != "0")
    # Landlock confinement of the worker (worker/confine/sandbox.py); off with --no-sandbox or P2T_SANDBOX=0.
    sandbox: bool = field(default_factory=sandbox_host.default_on)


def _total_ram() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 16 << 30


def scrubbed_env(extra: dict[str, str]) -> dict[str, str]:
    """The worker's environment: the allowlist of this process's variables plus ours."""
    env = {
        k: v for k, v in os.environ.items() if k in ENV_ALLOW or k.startswith(ENV_ALLOW_PREFIXES)
    }
    env.pop("TRITON_INTERPRET", None)  # the worker decides from the device it finds
    for var in ("CC", "CXX"):
        if var in env and shutil.which(env[var], path=env.get("PATH")) is None:
            env.pop(var)  # not one executable: the worker's Triton then finds gcc/clang on PATH, as without CC
    env.update(extra)
    return env


def _server_pythonpath() -> str:
    # The worker must import this very package even when it is not installed (a checkout).
    return str(Path(__file__).resolve().parent.parent)


class StderrTail:
    """Keeps the last STDERR_TAIL_BYTES of the worker's stdout+stderr, counts the rest."""

    def __init__(self) -> None:
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self.total = 0
        self._lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        """Append output, dropping the oldest bytes past the cap."""
        with self._lock:
            self.total += len(chunk)
            self._chunks.append(chunk)
            self._size += len(chunk)
            while self._size > STDERR_TAIL_BYTES:
                # Trim the oldest chunk rather than drop it whole: dropping a 64 KiB chunk could leave only the
                # last few bytes (a flood followed by a short line kept just that line).
                excess = self._size - STDERR_TAIL_BYTES
                if len(self._chunks[0]) <= excess:
                    self._size -= len(self._chunks.popleft())
                else:
                    self._chunks[0] = self._chunks[0][excess:]
                    self._size -= excess

    def mark(self) -> int:
        """Byte count so far (to slice what one call printed)."""
        return self.total

    def text(self, since: int = 0, limit: int = 4000) -> str:
        """The tail printed since `since`, with a note when output was truncated."""
        with self._lock:
            data = b"".join(self._chunks)
            start_total = self.total - len(data)
        if since > start_total:
            data = data[since - start_total :]
        printed = self.total - since
        out = data[-limit:].decode("utf-8", errors="replace")
        if printed > len(out):
            out = f"[... {printed - len(out)} earlier bytes of worker output truncated ...]\n" + out
        return out


def _process_table() -> dict[int, tuple[int, int, bytes]]:
    """pid -> (ppid, pgid, state) of every process, from /proc."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
            fields = stat[stat.rindex(b")") + 2 :].split()
            table[int(entry.name)] = (int(fields[1]), int(fields[2]), fields[0])
        except (OSError, ValueError, IndexError):
            continue
    return table


def _family(pid: int, *, worker_alive: bool = True) -> set[int]:
    """The live processes of a worker: its process group plus every descendant, also those that left the group
    with setsid (the worker is a child subreaper, so double-forked daemons stay its descendants). No zombies.
    Once the worker is reaped its pid may be reused, so only the group's members are followed then."""
    table = _process_table()
    children: dict[int, list[int]] = collections.defaultdict(list)
    for p, (ppid, _, _) in table.items():
        children[ppid].append(p)
    family = {p for p, (_, pgid, _) in table.items() if pgid == pid}
    stack = [pid, *family] if worker_alive else list(family)
    while stack:
        for c in children.get(stack.pop(), ()):
            if c not in family:
                family.add(c)
                stack.append(c)
    return {p for p in family if table.get(p, (0, 0, b"Z"))[2] not in (b"Z", b"X")}


def _family_size(pid: int) -> int:
    """How many live processes a running worker's family has (itself included), for the process limit checked
    every 0.1 s while a call runs. From the kernel's per-task children lists: the cost grows with the family, not
    with the machine's process count. _family reads every /proc/*/stat instead: with 125 processes on the dev VM
    that was 64 % of the server's CPU during a warm validation (issue 47), taken from the worker it waits for.
    Every member is a descendant (the worker is a child subreaper and its group's leader); without the children
    files (an old kernel) this falls back to _family."""
    seen, stack, live = {pid}, [pid], 0
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/stat", "rb") as f:
                stat = f.read()
            if stat[stat.rindex(b")") + 2:][:1] in (b"Z", b"X"):
                continue
            tasks = os.listdir(f"/proc/{p}/task")
        except (OSError, ValueError):
            continue
        live += 1
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children", "rb") as f:
                    kids = f.read().split()
            except FileNotFoundError:
                if p == pid and not os.path.exists(f"/proc/{p}/task/{t}/children"):
                    return len(_family(pid))
                continue
            except OSError:
                continue
            for k in kids:
                c = int(k)
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
    return live


def _kill_family(pid: int, *, worker_alive: bool = True) -> None:
    """SIGKILL a worker and everything it started. Stop them first so nothing forks or gets re-parented while we
    look; then kill the stopped set and the group."""
    stopped: set[int] = set()
    for _ in range(8):
        new = _family(pid, worker_alive=worker_alive) - stopped
        if not new:
            break
        for p in new:
            try:
                os.kill(p, signal.SIGSTOP)
            except (ProcessLookupError, PermissionError):
                pass
        stopped |= new
    for p in stopped:
        try:
            os.kill(p, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


@dataclass
class _Spawned:
    """One worker process and the server's ends of its pipes."""

    proc: subprocess.Popen
    to_worker: int
    from_worker: int
    tail: StderrTail
    mem_limit: int


def _reap(sp: _Spawned, wait_s: float = 10.0) -> None:
    """Kill a worker's family, wait for it (bounded), close its pipes."""
    _kill_family(sp.proc.pid, worker_alive=sp.proc.poll() is None)
    try:
        sp.proc.wait(timeout=wait_s)
    except subprocess.TimeoutExpired:
        pass
    for fd in (sp.to_worker, sp.from_worker):
        try:
            os.close(fd)
        except OSError:
            pass


def _reap_later(sp: _Spawned) -> None:
    """Kill now, wait for the exit in a daemon thread."""
    _kill_family(sp.proc.pid, worker_alive=sp.proc.poll() is None)
    threading.Thread(target=_reap, args=(sp,), name="p2t-reap", daemon=True).start()


@dataclass
class WorkerSlot:
    """One device slot: a lock, and the warm worker process that serves it."""

    name: str  # "cpu" or "cuda:<index>"
    visible_devices: str | None
    state_dir: Path
    workspace_root: Path
    limits: Limits = field(default_factory=Limits)
    lock: threading.Lock = field(default_factory=threading.Lock)
    proc: subprocess.Popen | None = None
    restarts: int = 0
    _next_id: int = 0
    _to_worker: int = -1
    _from_worker: int = -1
    _tail: StderrTail = field(default_factory=StderrTail)
    info: dict[str, Any] = field(default_factory=dict)
    _spare: _Spawned | None = None
    last_runtime: dict[str, Any] | None = None  # what the worker last reported (device, interpreter, GPU)
    memory_replacements: int = 0  # workers replaced because a call left GPU memory allocated
    # Per worker pid, the compile zygote it named in its first message (None: its first message named none); only a
    # first message counts: it is written before the worker reads a request, so no user code can have forged it.
    _zygotes: dict[int, int | None] = field(default_factory=dict)

    @property
    def _sandboxed(self) -> bool:
        return sandbox_host.on_for(self.name, self.limits.sandbox)[0]

    # ---- process lifecycle -------------------------------------------------
    def _spawn(self) -> None:
        """Make a worker this slot's current one: the warm spare when there is a live one, else a new process."""
        spare, self._spare = self._spare, None
        if spare is not None and spare.proc.poll() is None:
            sp = spare
            if self._next_id or self.restarts:  # the first call's prestarted worker: no spare until it answered
                self._ensure_spare()  # the next one warms up while this one serves
        else:
            if spare is not None:
                _reap_later(spare)
            sp = self._start_process()
        self.proc, self._to_worker, self._from_worker, self._tail, self._mem_limit = (
            sp.proc, sp.to_worker, sp.from_worker, sp.tail, sp.mem_limit)

    def prestart(self) -> None:
        """Start this slot's first worker now, in the background (torch imports while the client initializes);
        the first call takes it over as the current worker."""
        with self.lock:
            if self.proc is None and self._spare is None:
                self._spare = self._start_process()

    def _ensure_spare(self) -> None:
        """Start the standby worker if the slot has none (it imports torch and Triton, then waits)."""
        if self.limits.spare and (self._spare is None or self._spare.proc.poll() is not None):
            if self._spare is not None:
                _reap_later(self._spare)
            self._spare = self._start_process()

    def _start_process(self) -> _Spawned:
        req_r, req_w = os.pipe()
        res_r, res_w = os.pipe()
        tmp = self.state_dir / "tmp" / self.name.replace(":", "")
        tmp.mkdir(parents=True, exist_ok=True)
        extra = {
            "PYTHONPATH": os.pathsep.join(p for p in (_server_pythonpath(), os.environ.get("PYTHONPATH")) if p),
            "TMPDIR": str(tmp),
            "TRITON_CACHE_DIR": str(self.state_dir / "triton_cache"),
            "TORCHINDUCTOR_CACHE_DIR": str(self.state_dir / "inductor_cache"),
            # torch.compile baselines compiled once per workspace, also across servers (FX graph + AOTAutograd caches)
            "TORCHINDUCTOR_FX_GRAPH_CACHE": "1",
            "TORCHINDUCTOR_AUTOGRAD_CACHE": "1",
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        limits = self.limits
        mem = limits.memory_bytes or int(_total_ram() * 0.6)
        extra["P2T_WORKER_MEMORY_BYTES"] = str(mem)  # validate's input-size estimate respects the limit
        extra.update(sandbox_host.worker_env(*sandbox_host.on_for(self.name, limits.sandbox)))
        if self.visible_devices is not None:
            extra["CUDA_VISIBLE_DEVICES"] = self.visible_devices
        if self.name.startswith("cuda"):
            extra["P2T_WORKER_GPU"] = "1"  # the worker must say so if CUDA then fails in it (worker/__main__.py)
        env = scrubbed_env(extra)
        use_as = limits.cpu_address_space and self.name == "cpu" and not Path("/dev/nvidiactl").exists()

        def preexec() -> None:  # runs in the child before exec
            os.setsid()
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            if use_as:
                # Address space > RSS for torch (~3 GiB of mappings); add headroom over the RSS limit.
                resource.setrlimit(resource.RLIMIT_AS, (mem + (4 << 30), mem + (4 << 30)))
            try:
                resource.setrlimit(resource.RLIMIT_NPROC, (limits.max_processes * 8, limits.max_processes * 8))
            except (ValueError, OSError):
                pass

        cmd = [sys.executable, "-m", "pytorch_to_triton.worker", str(req_r), str(res_w)]
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=(req_r, res_w),
            cwd=str(self.workspace_root),
            env=env,
            preexec_fn=preexec,  # noqa: PLW1509 - setsid/limits must happen in the child
        )
        os.close(req_r)
        os.close(res_w)
        os.set_blocking(res_r, False)
        sp = _Spawned(proc, req_w, res_r, StderrTail(), mem)
        threading.Thread(target=self._drain, args=(proc, sp.tail), daemon=True).start()
        return sp

    @staticmethod
    def _drain(proc: subprocess.Popen, tail: StderrTail) -> None:
        assert proc.stdout is not None
        while True:
            chunk = proc.stdout.read1(65536)
            if not chunk:
                return
            tail.add(chunk)

    def kill(self) -> None:
        """Kill the current worker and its whole process group (a dying CUDA process is reaped in the background,
        so the next worker need not wait for the driver's teardown)."""
        proc = self.proc
        if proc is None:
            return
        _reap_later(self._current())
        self._zygotes.pop(proc.pid, None)  # a later worker may get the pid
        self._to_worker = self._from_worker = -1
        self.proc = None

    def alive(self) -> bool:
        """True when a worker process is running."""
        return self.proc is not None and self.proc.poll() is None

    # ---- one request -------------------------------------------------------
    def call(
        self,
        op: str,
        args: dict[str, Any],
        *,
        timeout_s: float,
        on_event: EventCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        """Send one request and wait for its result; kill and report on timeout, crash, limit, cancel."""
        if not self.alive():
            if self.proc is not None:
                self.kill()
            self._spawn()
            if self.restarts or self._next_id:
                self.restarts += 1
        elif self._next_id:
            self._ensure_spare()  # the current worker has answered before: start-up contention is over
        self._next_id += 1
        req_id = self._next_id
        mark = self._tail.mark()
        if op == "benchmark":  # the peaks measured on this host travel in; new ones come back (peaks_store.py)
            args = {**args, "peaks_known": peaks_store.known(self.state_dir)}
        try:
            protocol.write_message(self._to_worker, {"id": req_id, "op": op, "args": args})
        except (BrokenPipeError, OSError):
            self.kill()
            raise WorkerError("crashed", "the worker died before it read the request", self._tail.text(mark)) from None
        reader = protocol.LineReader(self._from_worker)
        deadline = time.monotonic() + timeout_s
        last_event: str | None = None
        watch = ProgressWatch()  # in-launch program counts: tells a slow call from a stuck one
        next_check = 0.0
        assert self.proc is not None
        pid = self.proc.pid
        scratch_tmp = self.state_dir / "tmp" / self.name.replace(":", "")
        free_at_start = sandbox_host.free_bytes(scratch_tmp) if self._sandboxed else -1
        while True:
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                self.kill()
                raise WorkerError("cancelled", "the call was cancelled; the worker was stopped", "", last_event)
            if now > deadline:
                tail = self._stack_dump(pid, mark)
                self.kill()
                err = WorkerError(
                    "timeout",
                    watch.timeout_message(timeout_s, last_event) or
                    f"no result after {timeout_s:.0f} s (last step: {last_event or 'starting'}); the worker and "
                    "everything it started were killed. Look for an endless loop, or raise timeout_s",
                    tail,
                    last_event,
                )
                err.progress = watch.verdict()  # type: ignore[attr-defined]
                raise err
            if now >= next_check:
                next_check = now + 0.1
                if _rss_bytes(pid) > self._mem_limit:
                    self.kill()
                    raise WorkerError(
                        "memory_limit",
                        f"the worker used more than {self._mem_limit >> 20} MiB of host memory and was killed",
                        self._tail.text(mark),
                        last_event,
                    )
                if _family_size(pid) > self.limits.max_processes:
                    self.kill()
                    raise WorkerError(
                        "process_limit",
                        f"user code started more than {self.limits.max_processes} processes; the group was killed",
                        self._tail.text(mark),
                        last_event,
                    )
                if sandbox_host.disk_filled(scratch_tmp, free_at_start):
                    self.kill()
                    shutil.rmtree(sandbox_host.scratch_root(scratch_tmp, pid), ignore_errors=True)
                    raise WorkerError("disk_limit", "user code filled the disk (less than "
                                      f"{sandbox_host.DISK_FLOOR_BYTES >> 20} MiB left); the worker was killed and its "
                                      "files removed", self._tail.text(mark), last_event)
            ready, _, _ = select.select([self._from_worker], [], [], 0.05)
            if ready:
                try:
                    messages = reader.feed()
                except ValueError as e:
                    self.kill()
                    raise WorkerError("crashed", str(e), self._tail.text(mark), last_event) from None
                for msg in messages:
                    self._zygote_note(pid, msg)
                    if msg.get("id") != req_id:
                        continue
                    kind = msg.get("type")
                    if kind in ("progress", "log", "case"):  # "case": per-case events, kept by case_journal.py
                        if not msg.get("interp_progress"):  # keep the step as the label; counts go to watch
                            last_event = msg.get("message") or last_event
                        if kind == "case":  # a new case or side: earlier in-launch counts say nothing about it
                            watch = ProgressWatch()
                        watch.see(msg)
                        if on_event is not None:
                            on_event(msg)
                    elif kind == "result":
                        result = msg.get("result") or {}
                        result.setdefault("worker_output", self._tail.text(mark, limit=2000) if self._tail.total > mark else "")
                        self.last_runtime = result.get("runtime") or self.last_runtime
                        if result.get("peaks_measured"):  # the host writes them: the worker may not
                            peaks_store.remember(self.state_dir, result.pop("peaks_measured"))
                        if self._sandboxed:
                            sandbox_host.after_call(pid, scratch_tmp, result, self._zygotes.get(pid))
                        if msg.get("worker_exiting"):
                            self.kill()  # its CUDA context is poisoned: the next call must get a fresh worker
                        elif self._leaked(msg.get("memory")):
                            result.setdefault("worker_memory", msg.get("memory"))["replaced"] = True
                        return result
                    elif kind == "error":
                        if self._sandboxed:
                            sandbox_host.after_call(pid, scratch_tmp, None, self._zygotes.get(pid))
                        if msg.get("worker_exiting"):
                            self.kill()
                        else:
                            self._leaked(msg.get("memory"))
                        err = msg.get("error") or {}
                        if err.get("usage"):
                            raise UsageError(err.get("message", "bad input"))
                        # A worker that exits after an error lost its CUDA context: the caller may resume elsewhere.
                        ekind = "ContextPoisoned" if msg.get("worker_exiting") else err.get("type", "error")
                        raise WorkerError(ekind, err.get("message", ""), self._tail.text(mark))
                if reader.eof:
                    code = self.proc.poll() if self.proc else None
                    if code is None and self.proc is not None:
                        try:
                            code = self.proc.wait(timeout=2)
                        except subprocess.TimeoutExpired:
                            code = None
                    time.sleep(0.05)  # let the drain thread collect the last words
                    tail = self._tail.text(mark, limit=16000)  # faulthandler's traceback + module list
                    self.kill()
                    raise WorkerError("crashed", _describe_exit(code, last_event, tail), tail, last_event)

    def _zygote_note(self, pid: int, msg: dict[str, Any]) -> None:
        """Remember the compile zygote worker `pid` names in its first message (worker/device/compile_zygote.py)."""
        if pid not in self._zygotes:
            z = msg.get("pid") if msg.get("type") == "zygote" else None
            self._zygotes[pid] = z if isinstance(z, int) and z > 0 else None

    def _leaked(self, memory: dict[str, Any] | None) -> bool:
        """Replace the worker when GPU memory stayed allocated after a call (more than MEMORY_SLACK_BYTES over
        its baseline): the next call gets the warm spare instead of a device an earlier call filled."""
        if not memory or memory.get("after") is None:
            return False
        if memory["after"] <= (memory.get("baseline") or 0) + MEMORY_SLACK_BYTES:
            return False
        self.memory_replacements += 1
        self.kill()
        return True

    def _stack_dump(self, pid: int, mark: int) -> str:
        """Ask a hung worker where it is (faulthandler dumps every thread's stack on SIGUSR1), then the tail."""
        try:
            os.kill(pid, signal.SIGUSR1)
        except OSError:
            return self._tail.text(mark)
        before = last = self._tail.total
        start = changed = time.monotonic()
        while time.monotonic() < start + 1.0:  # until the dump stops growing (it has no end marker)
            time.sleep(0.05)
            total = self._tail.total
            if total != last:
                last, changed = total, time.monotonic()
            elif total != before and time.monotonic() - changed >= 0.15:
                break
        return self._tail.text(mark, limit=16000)

    def close(self) -> None:
        """Stop the worker (and the spare) politely, then for sure."""
        spare, self._spare = self._spare, None
        for sp in ([spare] if spare is not None else []) + ([self._current()] if self.proc is not None else []):
            if sp.proc.poll() is None:
                try:
                    protocol.write_message(sp.to_worker, {"id": 0, "op": "shutdown", "args": {}})
                    sp.proc.wait(timeout=3)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            _reap(sp)
        self._to_worker = self._from_worker = -1
        self.proc = None

    def _current(self) -> _Spawned:
        assert self.proc is not None
        return _Spawned(self.proc, self._to_worker, self._from_worker, self._tail, 0)


_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit)): (.+)$", re.M)


def _describe_exit(code: int | None, last_event: str | None, tail: str = "") -> str:
    where = f" during: {last_event}" if last_event else ""
    found = _EXC_LINE.findall(tail or "")
    exc = f"{found[-1][0]}: {found[-1][1][:300]}" if found else ""
    if code is not None and code > 0 and exc and last_event is None and "pytorch_to_triton/worker/" in tail \
            and "Traceback" in tail:
        # The worker's own start-up (import torch/triton, runtime.setup) failed: the environment, not the user's code.
        hint = ""
        missing = re.search(r"No module named '([\w.]+)'", exc)
        if missing:
            hint = (f"; install it (pip install {missing.group(1).split('.')[0]})" +
                    (": Triton's CPU interpreter imports numpy" if missing.group(1).startswith("numpy") else ""))
        return f"the worker could not start: {exc}{hint}. This is the environment, not your code"
    if code is None:
        return f"the worker closed its pipe and did not exit{where}"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the worker was killed by {name}{where} (a segfault or abort in user code or a kernel)"
    last = f"; the last error it printed: {exc}" if exc else ""
    return f"the worker exited with status {code}{where} (user code called os._exit or sys.exit?){last}"


def discover_devices() -> list[str]:
    """GPU indices visible to this machine, without importing torch (nvidia-smi or /dev/nvidia*)."""
    forced = os.environ.get("P2T_DEVICES")
    if forced is not None:
        return [d.strip() for d in forced.split(",") if d.strip()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [d.strip() for d in visible.split(",") if d.strip() and d.strip() != "-1"]
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=False,
        )
        if out.returncode == 0:
            return [line.strip() for line in out.stdout.splitlines() if line.strip()]
    except (OSError, subprocess.TimeoutExpired):
        pass
    return []


class WorkerPool:
    """The local fast path: one slot, one warm worker, on this machine's first visible GPU (or the CPU).

    More GPUs, on this host or others, are a Dask cluster's job (`--cluster local` or `--cluster tcp://...`,
    cluster/client.py): each of its Dask workers keeps one WorkerSlot warm."""

    def __init__(self, workspace_root: Path, state_dir: Path, device: str | None = None,
                 limits: Limits | None = None):
        # device: None = the first GPU discover_devices() finds, else the CPU; "cpu" = the CPU; "3" = GPU 3.
        devs = discover_devices()[:1] if device is None else ([] if device == "cpu" else [device])
        lim = limits or Limits()
        if devs:
            self.slots = [WorkerSlot("cuda:0", devs[0], state_dir, workspace_root, lim)]
        else:
            self.slots = [WorkerSlot("cpu", None, state_dir, workspace_root, lim)]
        self._cond = threading.Condition()

    def device_names(self) -> list[str]:
        """Names callers can pass as `device`."""
        return [s.name for s in self.slots]

    def acquire(self, device: str | None = None, cancel: threading.Event | None = None) -> WorkerSlot:
        """Wait for an idle slot (the one named by `device`, if given) and lock it."""
        if device in (None, "", "auto"):
            candidates = self.slots
        else:
            want = device if ":" in str(device) or device == "cpu" else f"cuda:{device}"
            candidates = [s for s in self.slots if s.name == want]
            if not candidates:
                raise UsageError(f"device {device!r} is not served here; choose one of {self.device_names()} or 'auto' "
                                 "(more GPUs: start the server with --cluster local)")
        with self._cond:
            while True:
                # Prefer a warm idle worker: a cold one costs a fresh torch import (~4 s).
                idle = [s for s in candidates if not s.lock.locked()]
                idle.sort(key=lambda s: not s.alive())
                for slot in idle:
                    if slot.lock.acquire(blocking=False):
                        return slot
                if cancel is not None and cancel.is_set():
                    raise WorkerError("cancelled", "the call was cancelled while waiting for a free worker")
                self._cond.wait(timeout=0.1)

    def release(self, slot: WorkerSlot) -> None:
        """Unlock a slot and wake a waiting caller."""
        with self._cond:
            slot.lock.release()
            self._cond.notify_all()

    def call(self, op: str, args: dict[str, Any], *, timeout_s: float, device: str | None = None,
             on_event: EventCallback | None = None, cancel: threading.Event | None = None) -> dict[str, Any]:
        """Run one request on an idle slot; the result carries the slot's name as `worker_device`."""
        slot = self.acquire(device, cancel)
        try:
            result = slot.call(op, args, timeout_s=timeout_s, on_event=on_event, cancel=cancel)
            result["worker_device"] = slot.name
            result["worker_restarts"] = slot.restarts
            return result
        except WorkerError as e:
            # Where it ran, for a verdict that must not guess: the slot, and what its worker last reported.
            e.device = slot.name
            e.runtime = dict(slot.last_runtime or {"device": slot.name.split(":")[0],
                                                   "interpreter": slot.name == "cpu"})
            raise
        finally:
            self.release(slot)

    def prestart(self) -> None:
        """Start the first slot's worker ahead of the first call (the MCP server does, at start-up)."""
        self.slots[0].prestart()

    def close(self) -> None:
        """Stop every worker."""
        for slot in self.slots:
            slot.close()
