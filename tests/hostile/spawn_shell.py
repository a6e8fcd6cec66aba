"""Hostile: run a shell (anything from curl to rm -rf would follow)."""

import subprocess

from good import reference as _kernel

subprocess.run(["/bin/sh", "-c", "echo p2t-hostile > \"$HOME/pwned\""], check=True)


def reference(x, y):
    return _kernel(x, y)
