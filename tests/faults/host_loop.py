"""Fault: an endless loop in host code after starting helpers: a plain child, a child in its own session
(start_new_session) and a double-forked daemon. The timeout must take every one of them down."""

import os
import subprocess
import sys
import time

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def _daemon() -> int:
    r, w = os.pipe()
    if os.fork() == 0:  # child: new session, fork again, report the grandchild's pid, exit
        os.setsid()
        pid = os.fork()
        if pid == 0:
            os.execv(SLEEPER[0], SLEEPER)
        os.write(w, str(pid).encode())
        os._exit(0)
    os.close(w)
    pid = int(os.read(r, 32))
    os.wait()
    return pid


def reference(x, y):
    pids = [subprocess.Popen(SLEEPER).pid, subprocess.Popen(SLEEPER, start_new_session=True).pid, _daemon()]
    # The workspace is read-only under the sandbox: the test names a writable folder in P2T_SANDBOX_WRITABLE.
    out = os.environ.get("P2T_SANDBOX_WRITABLE", ".").split(os.pathsep)[0]
    with open(os.path.join(out, "helpers.pid"), "w") as f:
        f.write(" ".join(map(str, pids)))
    time.sleep(0.2)
    while True:
        pass
