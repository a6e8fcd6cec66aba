"""Did the candidate execute code from the reference file? (the `calls_reference` guard)

Python >= 3.12: `sys.monitoring` PY_START/PY_RESUME events while a candidate runs, in every thread. The callback
answers DISABLE for code from any other file, so each such function costs one callback in the process's life
instead of one per call: `sys.setprofile` ran a Python callback on every call and C call of Triton's launch path,
about a third of a warm validation's candidate time on the H200 (2026-12-04). Older Pythons: `sys.setprofile` on the
calling thread, as before. No torch import here, so the monitoring path is testable on any Python >= 3.12.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

_MON: Any = getattr(sys, "monitoring", None)
_TOOL_NAME = "pytorch-to-triton calls_reference guard"


class _State:
    tool: int | None = None  # the sys.monitoring tool id held, -1 when none could be had
    ref_file: str | None = None  # the file of the watch in progress
    hit: Callable[[], None] | None = None
    last_ref: str | None = None  # the file DISABLE decisions were made against


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
    ref = _State.ref_file
    if ref is None:  # events are off between watches; a stray one changes nothing and stays enabled
        return None
    if code.co_filename == ref:
        hit = _State.hit
        if hit is not None:
            hit()
        return None  # keep watching this function
    return _MON.DISABLE  # any other file never matters to this watch: no more events from this spot


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
        if _State.last_ref != self.ref_file:
            # Spots disabled while another file was the reference may be this one's: watch everything again.
            _MON.restart_events()
            _State.last_ref = self.ref_file
        _State.ref_file, _State.hit = self.ref_file, self.on_hit
        _MON.set_events(self._tool, _MON.events.PY_START | _MON.events.PY_RESUME)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._tool is None:
            sys.setprofile(None)
            return
        _MON.set_events(self._tool, 0)
        _State.ref_file, _State.hit = None, None
        sys.setprofile(None)  # as on the setprofile path: a profile function the candidate set does not outlive it


def uses_monitoring() -> bool:
    """Whether watches use sys.monitoring here (False: sys.setprofile)."""
    return _claim() is not None
