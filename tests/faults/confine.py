"""Records what the worker's process looks like from the inside (tests/test_faults.py checks it)."""

import json
import os
import resource
import tempfile

from good import reference as _good_reference


def _parent_environ_readable() -> bool:
    try:
        with open(f"/proc/{os.getppid()}/environ", "rb") as f:
            return bool(f.read(1))
    except OSError:
        return False


def reference(x, y):
    facts = {
        "pid": os.getpid(), "pgid": os.getpgid(0), "sid": os.getsid(0), "cwd": os.getcwd(),
        "env": dict(os.environ), "tempdir": tempfile.gettempdir(),
        "rlimit_core": resource.getrlimit(resource.RLIMIT_CORE), "rlimit_as": resource.getrlimit(resource.RLIMIT_AS),
        "parent_environ_readable": _parent_environ_readable(),
    }
    out = os.environ.get("P2T_SANDBOX_WRITABLE", ".").split(os.pathsep)[0]  # the workspace is read-only
    with open(os.path.join(out, "confine.json"), "w") as f:
        json.dump(facts, f)
    return _good_reference(x, y)
