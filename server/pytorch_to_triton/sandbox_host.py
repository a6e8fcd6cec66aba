"""The server's half of the worker sandbox (worker/confine/sandbox.py is the worker's): the switch, the worker's
environment, and the clean-up after every call (processes left behind, the scratch directory, a full disk).

This module runs in the server process: no torch, no user code. It does not trust the worker, which runs
candidate code: what it kills and deletes, it finds itself, from /proc and the file system.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

DISK_FLOOR_BYTES = 512 << 20  # a call is stopped when its file system has less free space than this
# Server-side variables the worker reads (the worker's environment is an allowlist: worker_client.scrubbed_env).
PASSED = ("P2T_SANDBOX_FILE_BYTES", "P2T_SANDBOX_CPU_S", "P2T_SANDBOX_EXEC", "P2T_SANDBOX_WRITABLE",
          "P2T_SANDBOX_PROC", "P2T_SANDBOX_TEST_NO_LANDLOCK")


def default_on() -> bool:
    """The sandbox is on unless P2T_SANDBOX=0 (the config switch behind `--no-sandbox`)."""
    return os.environ.get("P2T_SANDBOX", "1") != "0"


# THE GPU DEFAULT. False: GPU workers run unconfined unless P2T_SANDBOX=1 asks for it. True: confined like CPU workers
# (P2T_SANDBOX=0 and --no-sandbox still opt out). History: on the H200 (2026-12-04, driver 580.159.04, torch 2.11,
# Triton 3.6) cuInit under the ruleset failed with error 304 (fixed: CUDA and Triton's driver are set up before
# confine, worker/device/gpu_first.py), Triton's driver was refused /sbin/ldconfig, a shell script there (fixed: libcuda's
# directory pinned), and Triton 3.6's first launcher build was refused CC=/opt/gcc/bin/gcc (fixed: exec follows the
# compiler Triton resolves, worker/confine/toolchain.py; a CC that is a shell script there is replaced by the gcc on PATH,
# and torch's bundled ptxas may run). True since `PART=sandbox bash benchmarks/gpu_session.sh` passed with it on an
# H100 (2026-12-06 04:27 UTC, driver 580.159.04, torch 2.11.0+cu130, Triton 3.6.0: every item of issue 37's list,
# benchmarks/RESULTS.md).
GPU_CONFINED_BY_DEFAULT = True
GPU_OFF_WHY = ("off on GPU workers unless P2T_SANDBOX=1: the CUDA driver and Triton's toolchain under the Landlock "
               "ruleset are not yet verified on a GPU (references/sandbox.md)")


def on_for(slot_name: str, requested: bool) -> tuple[bool, str | None]:
    """Whether a slot's worker is confined, and why not when the default turned it off (GPU slots while
    GPU_CONFINED_BY_DEFAULT is False, see above)."""
    if (requested and slot_name.startswith("cuda") and not GPU_CONFINED_BY_DEFAULT
            and os.environ.get("P2T_SANDBOX") != "1"):
        return False, GPU_OFF_WHY
    return requested, None


def worker_env(enabled: bool, off_why: str | None = None) -> dict[str, str]:
    """Variables the worker needs for its sandbox. With it on, Inductor compiles in the worker's own process
    (TORCHINDUCTOR_COMPILE_THREADS=1): a pool of compile processes would outlive the call it started in, and
    every process left after a call is killed (after_call)."""
    env = {"P2T_SANDBOX": "1" if enabled else "0"}
    if off_why:
        env["P2T_SANDBOX_OFF_WHY"] = off_why
    if enabled:
        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        env.update({k: os.environ[k] for k in PASSED if os.environ.get(k)})
    return env


def scratch_root(tmp: Path, pid: int) -> Path:
    """The scratch root worker `pid` uses under its slot's temp dir (worker/confine/sandbox.py names it the same way)."""
    return tmp / f"w{pid}"


def _children(pid: int) -> list[int]:
    """Direct children of every thread of `pid` (/proc/<pid>/task/<tid>/children; the worker is a subreaper, so
    double-forked orphans are re-parented to it and show up here)."""
    out: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                out += [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            continue
    return out


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2:].split()[0] in (b"Z", b"X")
    except (OSError, ValueError, IndexError):
        return True  # gone


def descendants(pid: int) -> set[int]:
    """Every live descendant of `pid`, itself excluded (zombies, which the worker has not reaped, are not live:
    counting them would report the same killed process after every later call)."""
    seen: set[int] = set()
    stack = _children(pid)
    while stack:
        p = stack.pop()
        if p not in seen:
            seen.add(p)
            stack += _children(p)
    return {p for p in seen if not _zombie(p)}


def kill_leftovers(pid: int, keep: int | None = None) -> int:
    """SIGKILL every process worker `pid` started that still runs after its call; returns how many. They are stopped
    first, so none can fork while the tree is walked. keep: the worker's compile zygote (its descendants go)."""
    stopped: set[int] = set()
    for _ in range(8):
        new = descendants(pid) - stopped - {keep}
        if not new:
            break
        for p in new:
            try:
                os.kill(p, signal.SIGSTOP)
            except OSError:
                pass
        stopped |= new
    for p in stopped:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
    return len(stopped)


def empty_scratch(root: Path) -> None:
    """Delete what the call left in the worker's scratch root (the root itself stays: the worker's ruleset names it)."""
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for e in entries:
        if e.is_dir(follow_symlinks=False):
            shutil.rmtree(e.path, ignore_errors=True)
        else:
            try:
                os.unlink(e.path)
            except OSError:
                pass


def after_call(pid: int, tmp: Path, result: dict | None, keep: int | None = None) -> None:
    """After each sandboxed call: kill what the call left running (but `keep`, the compile zygote the worker named
    before its first request), empty its scratch, and say so in the result."""
    killed = kill_leftovers(pid, keep)
    empty_scratch(scratch_root(tmp, pid))
    if killed and result is not None:
        note = (f"the call left {killed} process(es) running after it returned; the sandbox killed them "
                "(a candidate must not leave work behind)")
        notes = result.get("notes")
        if isinstance(notes, list):
            notes.append(note)
        result["sandbox_killed"] = killed


def free_bytes(path: Path) -> int:
    """Free bytes on the file system that holds `path` (one statvfs; -1 when unknown)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return -1
    return st.f_bavail * st.f_frsize


def disk_filled(path: Path, free_at_start: int) -> bool:
    """True when this call brought its file system's free space under DISK_FLOOR_BYTES (a disk that was already that
    full at the start is left to the user: the call did not fill it)."""
    if free_at_start < 0:
        return False
    now = free_bytes(path)
    return 0 <= now < DISK_FLOOR_BYTES and now < free_at_start - (64 << 20)
