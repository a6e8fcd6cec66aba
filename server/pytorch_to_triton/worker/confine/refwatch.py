"""Did the candidate execute code from the reference file? (the `calls_reference` guard)

Python >= 3.12: `sys.monitoring` PY_START/PY_RESUME events, in every thread, switched on once and left on. The
callback answers DISABLE for code from any file but the reference, so each such function costs one callback in the
process's life; the reference's own functions keep firing and count while a watch is open. `sys.setprofile` ran a
Python callback on every call and C call of Triton's launch path. (A first version switched the events on and
off around each candidate call, which makes CPython re-instrument every function run after each switch; with it the
worker's warm validation of a vector add measured 176 ms against 130 ms before, H200, 2026-12-04.) Older Pythons:
`sys.setprofile` on the calling thread, as before. No torch import here, so the monitoring path is testable on any Python >= 3.12.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

_MON: Any = getattr(sys, "monitoring", None)
_TOOL_NAME = "pytorch-to-triton calls_reference guard"


class _State:
    tool: int | None = None  # the sys.monitoring tool id held, -1 when none could be had
    ref_file: str | None = None  # the reference file: its code keeps firing, every other file's is disabled
    hit: Callable[[], None] | None = None  # set while a watch is open


def _claim() -> int | None:
    if _MON is None:
        return None
    if _State.tool is None:
        _State.tool = -1
        for tid in (4, 3):  # ids no standard tool claims (0 debugger, 1 coverage, 2 profiler, 5 optimizer)
            if _MON.get_tool(tid) is None:
                _MON.use_tool_id(tid, _TOOL_NAME)
                ev = _MON.events
                _MON.register_callback(tid, ev.PY_START, _on_start)
                _MON.register_callback(tid, ev.PY_RESUME, _on_start)
                _State.tool = tid
                break
    return _State.tool if _State.tool >= 0 else None


def _on_start(code: Any, offset: int) -> Any:
    if code.co_filename != _State.ref_file:
        return _MON.DISABLE  # not the reference: no more events from this spot (until the reference changes)
    hit = _State.hit
    if hit is not None:
        hit()
    return None  # the reference: keep watching it (outside a watch, the harness's own calls just pass)


class RefWatch:
    """Context manager: `on_hit()` runs whenever code from `ref_file` starts (or resumes) inside the block."""

    def __init__(self, ref_file: str, on_hit: Callable[[], None]):
        self.ref_file = ref_file
        self.on_hit = on_hit
        self._tool: int | None = None

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename == self.ref_file:
            self.on_hit()

    def __enter__(self) -> RefWatch:
        self._tool = _claim()
        if self._tool is None:
            sys.setprofile(self._profile)
            return self
        if _State.ref_file != self.ref_file:
            # Spots disabled while another file was the reference may be this one's: every spot fires once more.
            _State.ref_file = self.ref_file
            _MON.restart_events()
            _MON.set_events(self._tool, _MON.events.PY_START | _MON.events.PY_RESUME)
        _State.hit = self.on_hit
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._tool is not None:
            _State.hit = None
        sys.setprofile(None)  # ours, or one the candidate set: it does not outlive the call


def uses_monitoring() -> bool:
    """Whether watches use sys.monitoring here (False: sys.setprofile)."""
    return _claim() is not None
