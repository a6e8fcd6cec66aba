"""The compile zygote: each validation's compile child forked from a process that has torch and Triton imported.

A CPU worker forks this process at start-up, once torch is imported and before Triton's interpreter, any patch or any
user file is (worker/__main__.py); it imports Triton and the compile child's modules without TRITON_INTERPRET, then
waits. A validation's compile child (target_compile_child.serve) is forked from it: fork costs milliseconds, where a
fresh `python -m ...target_compile_child` spent 3-5 s of CPU importing Python, torch and Triton on the dev VM (2 cores)
per validated candidate, the largest part of the target compile's cost (issue 46) and of the test command's (issue 49).
Every session starts from the zygote's clean state, as a fresh process did: a user module imported for one
validation is gone at the next.

The worker's protocol with it, one JSON line each way per step:
- worker -> zygote: {"sid": n, "stderr": path}; the zygote forks the session child and answers {"sid": n, "pid": p};
- worker -> session child: the compile child's request lines (target_compile_child.serve), up to {"finish": ...};
- session child -> worker: its answer, with "sid"; then the zygote, once the child has exited: {"sid": n, "exit": c}.
The worker sends the next session's line only after that exit line: no two readers of the pipe ever overlap.

The sandbox kills whatever a call leaves running (sandbox_host.after_call) except this zygote, which the worker names
in its first message, before it reads any request (no user code can have run yet); a process the candidate's module
starts in a session child is its descendant and is killed. Fallback: when there is no zygote (a GPU worker, a fork
that failed, a zygote that died) target_compile starts the fresh child as before.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import tempfile
import time
from typing import Any

_ZYGOTE: Zygote | None = None


def start(close_fds: tuple[int, ...]) -> int | None:
    """Fork the zygote (in the worker, torch imported, nothing of the user's yet); its pid, or None when fork fails.
    close_fds: the worker's protocol pipes, which the zygote must not hold open (the server reads EOF on them)."""
    global _ZYGOTE
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        for fd in (to_r, to_w, from_r, from_w):
            os.close(fd)
        return None
    if pid == 0:  # the zygote
        code = 0
        try:
            for fd in (to_w, from_r, *close_fds):
                os.close(fd)
            _serve(to_r, from_w)
        except BaseException:  # noqa: BLE001 - its end is the worker's fallback, never a traceback on its stderr
            code = 1
        finally:
            os._exit(code)
    os.close(to_r)
    os.close(from_w)
    _ZYGOTE = Zygote(to_w, from_r)
    return pid


def session(first: dict[str, Any]) -> ForkedChild | None:
    """A compile child forked from the zygote, sent `first`; None when there is none to fork from (use a fresh one)."""
    z = _ZYGOTE
    if z is not None and z.current is not None:  # a validation that ended without collecting its child (an error)
        z.current.kill()
    if z is None or z.broken:
        return None
    try:
        return ForkedChild(z, first)
    except OSError:
        z.broken = True
        return None


class Zygote:
    """The worker's ends of the zygote's pipes."""

    def __init__(self, to_w: int, from_r: int):
        self.to_w, self.from_r = to_w, from_r
        self.buf = b""
        self.current: ForkedChild | None = None  # the session in progress
        self.broken = False
        self.sid = 0

    def write(self, line: dict[str, Any]) -> None:
        _write(self.to_w, line)

    def read(self, sid: int, deadline: float) -> dict[str, Any] | None:
        """The next line of session `sid` (lines of an earlier, abandoned session are skipped); None at the deadline
        or at the zygote's end."""
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if isinstance(msg, dict) and msg.get("sid") == sid:
                    return msg
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_r], [], [], left)[0]:
                return None
            chunk = os.read(self.from_r, 1 << 16)
            if not chunk:
                self.broken = True
                return None
            self.buf += chunk


class ForkedChild:
    """One validation's compile child, forked from the zygote; the interface of target_compile._Child."""

    kind = "forked"

    def __init__(self, z: Zygote, first: dict[str, Any]):
        self.z = z
        z.sid += 1
        self.sid = z.sid
        self.started = time.perf_counter()
        self.broken: str | None = None
        fd, self.err_path = tempfile.mkstemp(prefix="p2t-compile-", suffix=".err")
        os.close(fd)
        z.current = self
        try:
            z.write({"sid": self.sid, "stderr": self.err_path})
            ack = z.read(self.sid, time.monotonic() + 30.0)  # the zygote may still be importing Triton
        except OSError:
            ack = None
        if ack is None or not ack.get("pid"):
            z.broken = True
            self._done()
            raise OSError("the compile zygote did not fork a child")
        self.pid = int(ack["pid"])
        self.send(first)

    def send(self, line: dict[str, Any]) -> None:
        """One request line (the child reads it while it compiles)."""
        if self.broken:
            return
        try:
            self.z.write(line)
        except OSError as e:
            self.broken = f"{type(e).__name__}: {e}"

    def kill(self) -> None:
        """Stop the child; the zygote serves the next session once it has reaped it."""
        if self.z.current is self:
            self._stop()
        self._done()

    def finish(self, elapsed_s: float, timeout_s: float, notes: list[str]) -> dict[str, Any] | None:
        """Tell the child the validation took elapsed_s, wait for its answer (None after a fault, with a note)."""
        self.send({"finish": True, "elapsed_s": elapsed_s})
        left = max(60.0, timeout_s - (time.perf_counter() - self.started))  # as _Child.finish: a minute at least
        msg = self.z.read(self.sid, time.monotonic() + left)
        try:
            if msg is None:
                self._stop()
                notes.append(stopped_note(timeout_s))
                return None
            if "exit" in msg:  # it ended without an answer (an abort in the compiler, a signal)
                notes.append(no_answer_note(msg["exit"], self._err()))
                return None
            if self.z.read(self.sid, time.monotonic() + 10.0) is None:  # its exit line: then the pipe is free
                self._stop()
            return msg
        finally:
            self._done()

    def _stop(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        if self.z.read(self.sid, time.monotonic() + 10.0) is None:  # no exit line: the zygote is stuck or gone
            self.z.broken = True

    def _err(self) -> str:
        try:
            with open(self.err_path, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def _done(self) -> None:
        if self.z.current is self:
            self.z.current = None
        try:
            os.unlink(self.err_path)
        except OSError:
            pass


def stopped_note(timeout_s: float) -> str:
    """The note of a compile child that did not answer in time (fresh or forked)."""
    return f"compile for the target stopped after {timeout_s:.0f} s"


def no_answer_note(code: int | None, stderr: str | None) -> str:
    """The note of a compile child that ended without an answer (an abort in the compiler, a signal): its exit code
    and the last lines of its stderr."""
    tail = (stderr or "").strip().splitlines()[-3:]
    return f"the compile child exited {code} without an answer: {' | '.join(tail)[-400:]}"


# --- the zygote's side ---


def _serve(rfd: int, wfd: int) -> None:
    """Import what every compile child needs, then fork one per session line until the worker closes the pipe."""
    import warnings

    warnings.simplefilter("ignore", DeprecationWarning)  # Python 3.12's fork-in-a-threaded-process warning
    os.environ.pop("TRITON_INTERPRET", None)
    os.environ["TRITON_DEFAULT_FP_FUSION"] = os.environ.get("TRITON_DEFAULT_FP_FUSION", "1")  # as _Child's env
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)  # the server's stack-dump request is for the worker
    from . import target_compile_child as child

    child.preload()
    me = os.getpid()
    while True:
        header = _read_line(rfd)
        if not header:
            return
        try:
            head = json.loads(header)
            sid, err = head["sid"], head.get("stderr")
        except (ValueError, KeyError, TypeError):
            continue
        pid = os.fork()
        if pid == 0:
            code = 3
            try:
                _session(child, me, rfd, wfd, sid, err)
                code = 0
            finally:
                os._exit(code)
        _write(wfd, {"sid": sid, "pid": pid})
        _, status = os.waitpid(pid, 0)
        try:  # what the candidate's module started in the child's group goes with it (the rest: after_call)
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        _write(wfd, {"sid": sid, "exit": os.waitstatus_to_exitcode(status)})


def _session(child: Any, zygote: int, rfd: int, wfd: int, sid: int, err: str | None) -> None:
    """One compile child: its own process group, its stderr to the worker's file, the requests from the pipe, the
    answer back."""
    _die_with(zygote)
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    if err:
        fd = os.open(err, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.dup2(fd, 2)
        os.close(fd)
    os.dup2(2, 1)  # the user's module may print at import: never onto a pipe
    sys.stdout = sys.stderr
    lines = os.fdopen(rfd, "r", closefd=False)
    answer = child.serve(lines)
    answer["sid"] = sid
    _write(wfd, answer)


def _die_with(parent: int) -> None:
    """SIGKILL this process when the zygote dies (a worker that is killed takes its compiles with it)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(4)


def _read_line(fd: int) -> bytes:
    """One line, read a byte at a time: what follows it on the pipe is the session child's to read."""
    out = bytearray()
    while True:
        b = os.read(fd, 1)
        if not b:
            return bytes(out)
        if b == b"\n":
            return bytes(out)
        out += b


def _write(fd: int, msg: dict[str, Any]) -> None:
    data = (json.dumps(msg, default=str) + "\n").encode()
    while data:
        data = data[os.write(fd, data):]
