"""Errors raised by pytorch-to-triton.

    P2TError                  base class; every message says what to change
    ├── UsageError            a bad tool input (missing file, path outside the workspace, unknown dtype)
    └── WorkerError           the worker could not answer (timeout, crash, memory limit, cancelled)

A failing *kernel* is not an error: it is a report with ``ok: false`` (see schemas.py).
"""

from __future__ import annotations


class P2TError(Exception):
    """Base class of all pytorch-to-triton errors."""


class UsageError(P2TError):
    """The caller passed something we cannot run; the message says how to fix the call."""


class WorkerError(P2TError):
    """The worker process died, timed out, exceeded a limit or was cancelled."""

    def __init__(self, kind: str, message: str, stderr_tail: str = "", last_event: str | None = None):
        super().__init__(message)
        self.kind = kind  # timeout | crashed | memory_limit | process_limit | cancelled
        self.stderr_tail = stderr_tail
        self.last_event = last_event
