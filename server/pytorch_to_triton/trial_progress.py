"""Server side of in-launch progress: watch the worker's program counts and word a timeout as slow or stuck.

The worker (worker/device/interp_progress.py) reports, under the interpreter, how many programs of the running launch
have finished. When a call times out we know whether they were still finishing (slow: raise timeout_s or
shrink the sizes) or not (stuck: an endless loop is likely). No torch or triton here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

STALL_MIN_S = 5.0  # no program finished for this long (and 5x the mean program time): stuck


@dataclass
class ProgressWatch:
    """The latest in-launch progress event of one request and when the program count last moved."""

    last: dict[str, Any] | None = None
    last_at: float = 0.0
    moved_at: float = 0.0
    _key: tuple[int, int] = (-1, -1)

    def see(self, msg: dict[str, Any], now: float | None = None) -> None:
        """Feed every progress/log message of the request; keeps the in-launch ones."""
        if not msg.get("interp_progress"):
            return
        now = time.monotonic() if now is None else now
        key = (int(msg.get("programs_seen") or 0), int(msg.get("launches_seen") or 0))
        if key != self._key:  # a program finished or a launch began since the last event
            self._key, self.moved_at = key, now
        self.last, self.last_at = msg, now

    def verdict(self, now: float | None = None) -> dict[str, Any] | None:
        """{"state": "slow"|"stuck", counts...}, or None when no in-launch progress was ever reported."""
        if self.last is None:
            return None
        now = time.monotonic() if now is None else now
        m = self.last
        done, total = int(m.get("programs_done") or 0), int(m.get("programs_total") or 0)
        elapsed = float(m.get("launch_elapsed_s") or 0.0) + (now - self.last_at)
        per_program = float(m.get("launch_elapsed_s") or 0.0) / done if done else 0.0
        stall = now - self.moved_at
        # Slow needs evidence: a program of this request finished, and recently enough. A launch whose first
        # program never finished is reported as stuck (the message says what a very long program would mean).
        finished_any = int(m.get("programs_seen") or 0) > 0
        stuck = not finished_any or stall > max(STALL_MIN_S, 5.0 * per_program)
        eta = m.get("eta_s")
        if not stuck and done and total > done:  # re-estimate from the rate at the last event
            eta = (total - done) * per_program - (now - self.last_at)
        return {"state": "stuck" if stuck else "slow", "kernel": m.get("kernel"), "programs_done": done,
                "programs_total": total, "launch_elapsed_s": round(elapsed, 1), "stalled_s": round(stall, 1),
                "eta_s": None if eta is None else round(max(0.0, float(eta)), 1)}

    def timeout_message(self, timeout_s: float, last_event: str | None, now: float | None = None) -> str | None:
        """The timeout's message when in-launch progress is known, else None (the caller keeps its own)."""
        v = self.verdict(now)
        if v is None:
            return None
        k, done, total = v["kernel"], v["programs_done"], v["programs_total"]
        of = f"{done} of {total}" if total else f"{done}"
        killed = "the worker and everything it started were killed"
        if v["state"] == "slow":
            more = f", estimate {v['eta_s']:.0f} s more for this launch" if v["eta_s"] is not None else ""
            return (f"no result after {timeout_s:.0f} s, but the kernel was still making progress (slow, not stuck): "
                    f"{k}: {of} programs done in {v['launch_elapsed_s']:.0f} s{more}. Raise timeout_s or shrink "
                    f"sizes (the interpreter runs every program in Python; fewer, larger blocks help); {killed}")
        if total and done >= total:
            return (f"no result after {timeout_s:.0f} s: no kernel program ran in the last {v['stalled_s']:.0f} s "
                    f"(the last launch, {k}, finished its {total} programs); the time went to host code (the "
                    "wrapper, the reference or the checks: see the stack in stderr_tail). Look for an endless loop "
                    f"there, or raise timeout_s; {killed}")
        return (f"no result after {timeout_s:.0f} s: stuck, no program finished in the last {v['stalled_s']:.0f} s "
                f"({k}: {of} programs done; last step: {last_event or 'starting'}). Look for an endless loop (a "
                f"while condition that never changes, a loop bound that is never reached), or raise timeout_s if "
                f"a single program really takes that long; {killed}")
