"""A time limit on the worker's main thread: an exception raised into a call that is still running after N seconds.

The worker serves requests on its main thread (worker/__main__.py), so a SIGALRM handler reaches the user's code
wherever it is: a sleep, a pure-Python loop, a loop of torch ops. The exception should be a BaseException, so that
the user's own `except Exception` cannot swallow it. Used by the audit's caller run (probe/caller_env.py) and the
validation's dry run at full size (validation/dry_run.py).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any


@contextlib.contextmanager
def time_limit(seconds: float, stop: Callable[[], BaseException]) -> Iterator[bool]:
    """Raise stop() into the block after `seconds`; yields whether the limit is armed (False off the main thread or
    for seconds <= 0: the caller then needs its own check). The handler and timer before it are put back."""
    if threading.current_thread() is not threading.main_thread() or seconds <= 0 or not hasattr(signal, "setitimer"):
        yield False
        return

    def fire(_sig: int, _frame: Any) -> None:
        raise stop()

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield True
    finally:
        try:
            signal.setitimer(signal.ITIMER_REAL, 0)
        finally:  # the alarm may fire here: the handler is put back all the same
            signal.signal(signal.SIGALRM, old)
