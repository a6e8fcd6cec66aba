"""A confined process and CUDA, each order in its own subprocess (benchmarks/sandbox_gpu_child.py):
  worker         what the worker does (worker/device/gpu_first.py: CUDA, Triton's driver, libcuda's path pinned, then
                 confine), then a Triton kernel (JIT, ptxas, Triton 3.6's launcher built with the C compiler Triton
                 resolves) and torch.compile confined;
  confine_first  (--all) confine, then initialise CUDA: cuInit failed with error 304 on the H200 (2026-12-04);
  cuda_first     (--all) CUDA first, then confine, then a Triton kernel: refused /sbin/ldconfig there.
First it prints the compilers the ruleset will let run (worker/confine/toolchain.py) in this environment.

    PYTHONPATH=$PWD/.site:$PWD/server python3 benchmarks/sandbox_gpu_probe.py [--all]

Success: "triton kernel under the sandbox: True" and "torch.compile under the sandbox: True" under `worker`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))


def main() -> int:
    """Run the orders and print what each child said; exit 0 when the worker order launched and compiled."""
    from pytorch_to_triton.worker.confine import toolchain

    tc = toolchain.resolve()
    print(f"CC={os.environ.get('CC')!r} CXX={os.environ.get('CXX')!r} -> {tc.describe()}; C++ {tc.cxx_compiler}; "
          f"programs {tc.programs}; readable {tc.read_dirs}; {'; '.join(tc.notes)}", flush=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "server"), os.environ.get("PYTHONPATH", "")]))
    orders = ("worker", "confine_first", "cuda_first") if "--all" in sys.argv else ("worker",)
    ok = False
    for order in orders:
        try:
            r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "sandbox_gpu_child.py"), order], cwd=ROOT,
                               env=env, capture_output=True, text=True, timeout=150)
            out, rc = r.stdout + r.stderr[-2500:], r.returncode
        except subprocess.TimeoutExpired as e:
            out, rc = f"{e.stdout or ''}\nTIMEOUT after 150 s", "timeout"
        print(f"== {order}: rc {rc}\n{out}", flush=True)
        if order == "worker":
            ok = "triton kernel under the sandbox: True" in out and "torch.compile under the sandbox: True" in out
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
