"""Why compute-sanitizer's target dies inside a confined worker (H100, 2026-12-06: "Target application terminated
before first instrumented API call", rc 255, every audit). Each variant in a fresh process: confine as a worker does
(sandbox.confine), then run memcheck over a one-line CUDA program and print what the sanitizer said.
Variants: plain | shm (P2T_SANDBOX_WRITABLE=/dev/shm) | tcp-free (no Landlock: limits only) | off (no sandbox).
Run: PYTHONPATH=$PWD/server python3 benchmarks/explore/sanitizer_confined.py [variant ...]"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

CHILD = r"""
import os, subprocess, sys
from pytorch_to_triton.worker.confine import sandbox
from pytorch_to_triton.worker.probe import sanitizer
exe = sanitizer.find()
st = sandbox.confine(os.getcwd())
print("summary:", st.summary[:300], flush=True)
code = "import torch; x = torch.ones(4, device='cuda'); print('target ok', float(x.sum()))"
ports = sandbox.STATE.tcp_ports
print("ports", ports, flush=True)
extra = ["--port", str(ports[0]), "--max-connections", str(len(ports))] if ports else []
r = subprocess.run([exe, "--tool", "memcheck", *extra, sys.executable, "-c", code],
                   capture_output=True, text=True, env=sanitizer.child_env())
print("rc", r.returncode)
print(r.stdout[-2500:])
print(r.stderr[-2500:])
"""


def main() -> int:
    variants = sys.argv[1:] or ["plain", "shm", "limits", "off"]
    for v in variants:
        env = {**os.environ, "P2T_SANDBOX": "0" if v == "off" else "1"}
        if v in ("shm", "tmp", "both"):
            env["P2T_SANDBOX_WRITABLE"] = {"shm": "/dev/shm", "tmp": "/tmp", "both": "/dev/shm:/tmp"}[v]
        if v == "limits":
            env["P2T_SANDBOX_TEST_NO_LANDLOCK"] = "1"
        with tempfile.TemporaryDirectory() as ws:
            r = subprocess.run([sys.executable, "-c", CHILD], cwd=ws, env=env, capture_output=True, text=True,
                               timeout=120)
        print(f"===== {v}: rc {r.returncode}")
        print("\n".join((r.stdout + r.stderr).strip().splitlines()[-30:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
