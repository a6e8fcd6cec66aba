"""Progress from inside a launch under Triton's CPU interpreter: programs done of total, rate, time left.

The interpreter runs a launch as a Python loop over the grid (GridExecutor.__call__), calling
InterpreterBuilder.set_grid_idx before each program. We wrap those (feature-detected; Triton 3.6 and 3.9 have the
same three methods) and send a "progress" event through the request's emit channel at most every 0.5 s. The
server (trial_progress.py) uses the events to tell a slow validation from a stuck one when it times out.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

EMIT_EVERY_S = 0.5  # at most two events a second: enough for an ETA, little next to a program's cost
Emit = Callable[..., None]


class Tracker:
    """Counts programs of the launch in progress and reports them through the current request's emit."""

    def __init__(self) -> None:
        self.emit: Emit | None = None
        self.clock: Callable[[], float] = time.monotonic
        self._reset_request()

    def _reset_request(self) -> None:
        self.step_msg = ""
        self.step_progress: float | None = None
        self.step_total: float | None = None
        self.sent_progress: float | None = None
        self.programs_seen = 0  # programs finished in this request (all launches): the server's "still moving"
        self.launches_seen = 0
        self.kernel = ""
        self.total = 0
        self.started = 0
        self.t_launch = 0.0
        self.in_launch = False
        self.last_emit = 0.0

    # ---- the request's emit ----------------------------------------------------------------------
    def bind(self, emit: Emit) -> Emit:
        """Start a request: returns an emit that also remembers the step (message, progress, total)."""
        self._reset_request()
        self.emit = emit

        def wrapped(kind: str, **fields: Any) -> None:
            if kind == "progress":
                self.step_msg = str(fields.get("message") or "")
                self.step_progress = fields.get("progress")
                self.step_total = fields.get("total")
                self.sent_progress = self.step_progress
            if kind in ("progress", "case"):
                # A new step or case side: the server's watch starts afresh on a case event (worker_client.py), so
                # the next program reports at once, whatever was sent just before. Otherwise a kernel stuck in its
                # first program right after the dry run's sampled programs (< 0.5 s earlier) sent nothing at all,
                # and its timeout could not say "stuck" (tests/faults/kernel_loop.py).
                self.last_emit = 0.0
            emit(kind, **fields)

        return wrapped

    def unbind(self) -> None:
        """End of the request: nothing is emitted until the next bind()."""
        self.emit = None

    # ---- interpreter hooks -----------------------------------------------------------------------
    def launch_begin(self, kernel: str) -> None:
        """GridExecutor.__call__ started."""
        self.kernel, self.total, self.started = kernel, 0, 0
        self.t_launch = self.clock()
        self.in_launch = True
        self.launches_seen += 1

    def grid(self, nx: int, ny: int, nz: int) -> None:
        """set_grid_dim: the launch's program count."""
        try:
            self.total = int(nx) * int(ny) * int(nz)
        except (TypeError, ValueError):
            self.total = 0

    def program(self) -> None:
        """set_grid_idx: a program starts, so the one before it has finished."""
        if not self.in_launch:
            return
        if self.started:
            self.programs_seen += 1
        self.started += 1
        now = self.clock()
        if now - self.last_emit >= EMIT_EVERY_S:
            self._send(now, self.started - 1)

    def launch_end(self, completed: bool) -> None:
        """GridExecutor.__call__ returned (or raised)."""
        if not self.in_launch:
            return
        done = self.total if completed else max(0, self.started - 1)
        if completed and self.started:
            self.programs_seen += 1  # the last program
        now = self.clock()
        # A launch that took long is always reported at its end, so the server knows it finished.
        if now - self.last_emit >= EMIT_EVERY_S or (completed and now - self.t_launch >= EMIT_EVERY_S):
            self._send(now, done)
        self.in_launch = False

    def _send(self, now: float, done: int) -> None:
        if self.emit is None:
            return
        self.last_emit = now
        elapsed = now - self.t_launch
        total = self.total
        rate = done / elapsed if elapsed > 0 and done else 0.0
        eta = (total - done) / rate if rate > 0 and total >= done else None
        where = f"{self.kernel}: {done}/{total} programs" if total else f"{self.kernel}: {done} programs"
        extra = f", {rate:.1f}/s, about {eta:.0f} s left in this launch" if eta is not None and done < total else ""
        msg = f"{self.step_msg} | {where} in {elapsed:.1f} s{extra}" if self.step_msg else f"{where}{extra}"
        fields: dict[str, Any] = {
            "message": msg, "kernel": self.kernel, "programs_done": done, "programs_total": total,
            "launch_elapsed_s": round(elapsed, 3), "eta_s": None if eta is None else round(eta, 1),
            "programs_seen": self.programs_seen, "launches_seen": self.launches_seen, "interp_progress": True,
        }
        try:
            if self.step_progress is not None:
                # Between this step and the next, never backwards (MCP progress must increase).
                frac = done / total if total else 0.0
                p = float(self.step_progress) + 0.99 * min(1.0, frac)
                p = max(p, float(self.sent_progress or 0.0))
                self.sent_progress = p
                self.emit("progress", progress=round(p, 4), total=self.step_total, **fields)
            else:
                self.emit("log", level="info", **fields)
        except OSError:  # the server went away; the orphan watch ends us
            pass


TRACKER = Tracker()


def install() -> bool:
    """Wrap the interpreter's grid loop (idempotent); False when its internals are not the ones we know."""
    try:
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover
        return False
    builder = getattr(interpreter, "InterpreterBuilder", None)
    executor = getattr(interpreter, "GridExecutor", None)
    names = ("set_grid_idx", "set_grid_dim")
    if builder is None or executor is None or not all(callable(getattr(builder, n, None)) for n in names) \
            or "__call__" not in vars(executor):
        return False
    if getattr(executor.__call__, "_p2t_progress", False):
        return True
    orig_call, orig_idx, orig_dim = executor.__call__, builder.set_grid_idx, builder.set_grid_dim

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        TRACKER.launch_begin(getattr(getattr(self, "fn", None), "__name__", "kernel"))
        ok = False
        try:
            ret = orig_call(self, *args, **kwargs)
            ok = True
            return ret
        finally:
            TRACKER.launch_end(ok)

    def set_grid_idx(self: Any, x: Any, y: Any, z: Any) -> Any:
        TRACKER.program()
        return orig_idx(self, x, y, z)

    def set_grid_dim(self: Any, nx: Any, ny: Any, nz: Any) -> Any:
        TRACKER.grid(nx, ny, nz)
        return orig_dim(self, nx, ny, nz)

    __call__._p2t_progress = True  # type: ignore[attr-defined]
    executor.__call__ = __call__
    builder.set_grid_idx = set_grid_idx
    builder.set_grid_dim = set_grid_dim
    return True
