"""Bad candidate (tests/test_sandbox.py, run with CC naming another compiler than the gcc on PATH): runs the gcc on
PATH, which is not the compiler Triton resolves. The sandbox allows exec of Triton's compiler and what it runs, and
nothing more: this exec is refused."""

import shutil
import subprocess

from good import reference as _kernel

subprocess.run([shutil.which("gcc") or "gcc", "--version"], check=True, capture_output=True)


def reference(x, y):
    return _kernel(x, y)
