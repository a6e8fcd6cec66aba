"""Fault: a call that would run for ten minutes; the tests and the suite cancel it."""

import time


def reference(x, y):
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        time.sleep(0.01)
    return x + y
