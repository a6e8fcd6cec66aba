"""What a GPU worker sets up before it confines itself (worker/confine/sandbox.py): the CUDA context and Triton's driver,
whose first use runs programs (ldconfig) and builds C helpers that the ruleset would refuse later."""

from __future__ import annotations

import os


def init_cuda() -> str | None:
    """Import torch and create the CUDA context now (before the sandbox); the error text when that fails."""
    try:
        import torch

        torch.cuda.init()
        torch.zeros(1, device="cuda")  # the primary context, as the first request would make it
        # Triton's driver finds libcuda with /sbin/ldconfig, a shell script on some images (no shell once confined):
        # its answer is cached, and its C helpers are built into the cache now.
        from triton.runtime import driver

        driver.active.get_current_device()
        pin_libcuda_dirs()
        return None
    except Exception as e:  # noqa: BLE001 - the worker then reports gpu_missing; it must still serve
        return f"{type(e).__name__}: {str(e)[:300]}"


def pin_libcuda_dirs() -> None:
    """Ask Triton where libcuda is now (it runs /sbin/ldconfig -p, a shell script on some images, refused once
    confined) and put the answer in TRITON_LIBCUDA_PATH, so neither this process (the answer is cached) nor a
    compile subprocess (Inductor's workers inherit the environment) runs ldconfig again. Older Tritons: no-op."""
    if os.environ.get("TRITON_LIBCUDA_PATH"):
        return
    try:
        from triton.backends.nvidia.driver import libcuda_dirs
    except ImportError:
        return
    dirs = libcuda_dirs()
    if dirs:
        os.environ["TRITON_LIBCUDA_PATH"] = dirs[0]
