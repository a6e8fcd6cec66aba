"""A confined process and CUDA: (1) confine first, then initialise CUDA (how the worker did it before
2026-12-04 21:00: cuInit failed with error 304 on the H200); (2) initialise CUDA first, then confine, then allocate,
launch a Triton kernel (JIT, ptxas, the launcher's C build) and read back; (3) what the worker does now
(worker/gpu_first.py: CUDA, Triton's driver, libcuda's path pinned, then confine), plus torch.compile confined.
Each in its own subprocess.

    PYTHONPATH=$PWD/.site:$PWD/server python3 benchmarks/sandbox_gpu_probe.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    """Run both orders and print what each child said."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "server"), os.environ.get("PYTHONPATH", "")]))
    for order in ("confine_first", "cuda_first", "worker"):
        r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "sandbox_gpu_child.py"), order], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=120)
        print(f"== {order}: rc {r.returncode}\n{r.stdout}{r.stderr[-1500:]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
