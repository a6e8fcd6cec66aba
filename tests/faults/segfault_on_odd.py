"""Fault in one case only: the candidate segfaults (ctypes.string_at(0)) on the odd_7 case and is correct
elsewhere. Expected: that case fails as `crashed`, the other cases pass in a fresh worker."""

import ctypes

from good import reference as _good


def reference(x, y):
    if x.numel() == 7:
        ctypes.string_at(0)
    return _good(x, y)
