"""Hostile: leave a process running after the call (it would keep the GPU busy under the next call's timings).
The child re-executes Python with a marker in its argv so that the test can look for it in /proc."""

import os
import sys

from good import reference as _kernel

if os.fork() == 0:
    os.setsid()
    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", "p2t-hostile-sleeper"])


def reference(x, y):
    return _kernel(x, y)
