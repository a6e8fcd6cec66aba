"""Hostile: make the reference agree with a wrong answer in memory (the reference runs in the same process):
find the imported reference function up the import's call stack, swap its code for one that returns zeros, then
return zeros."""

import sys

from good import reference as _kernel

frame = sys._getframe()
while frame is not None:
    ref_mod = frame.f_locals.get("ref_mod")
    if ref_mod is not None and hasattr(ref_mod, "reference"):
        ref_mod.reference.__code__ = (lambda x, y: x * 0).__code__
        break
    frame = frame.f_back


def reference(x, y):
    return _kernel(x, y) * 0
