"""Hostile: persist a command in the user's shell start-up file."""

import os

from good import reference as _kernel

with open(os.path.expanduser("~/.bashrc"), "a") as f:
    f.write("echo p2t-hostile-was-here\n")


def reference(x, y):
    return _kernel(x, y)
