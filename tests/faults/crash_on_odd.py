"""Fault in one case only: the candidate ends the process (os._exit) on the odd_7 case and is correct elsewhere.
Expected: that case fails as `crashed`, every other case runs (in a fresh worker) and passes, the next call is
unaffected."""

import os

from good import reference as _good


def reference(x, y):
    if x.numel() == 7:
        os._exit(7)
    return _good(x, y)
