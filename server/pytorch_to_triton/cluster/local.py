"""`--cluster local`: a Dask cluster on this machine, one worker per visible GPU, each pinned and with resources GPU=1.

Plain distributed (a SpecCluster of Nannies, which is what LocalCluster builds), not dask-cuda: dask-cuda 26.10 pulls
in pandas, cuda-core and rapids-dask-dependency (which pins dask itself) for features we do not use (UCX, device
memory spilling); our project worker owns the GPU, Dask only places calls. Each worker gets CUDA_VISIBLE_DEVICES of its
GPU (and P2T_DEVICES, which discover_devices() reads first), so its project worker sees that one GPU as cuda:0. Without a GPU (CI, a laptop), `cpu_workers` workers run the
interpreter, each advertising one GPU lane so the same tasks place the same way.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from ..worker_client import discover_devices

CPU_WORKERS_ENV = "P2T_CLUSTER_CPU_WORKERS"


def worker_specs(gpus: list[str], cpu_workers: int, threads: int) -> dict[str, dict[str, Any]]:
    """One Nanny spec per GPU (pinned), or `cpu_workers` specs without one; each with resources GPU=1."""
    from distributed import Nanny

    # The Dask worker itself never imports torch (plugin.py), so its memory limit is for its own bookkeeping;
    # the project worker below it has its own (worker_client.Limits).
    common = {"nthreads": threads, "resources": {"GPU": 1}, "memory_limit": 0, "dashboard": False,
              "host": "127.0.0.1", "silence_logs": logging.ERROR}
    if gpus:
        return {f"gpu{g}": {"cls": Nanny, "options": {**common, "name": f"gpu{g}",
                                                       "env": {"CUDA_VISIBLE_DEVICES": g, "P2T_DEVICES": g}}}
                for g in gpus}
    return {f"cpu{i}": {"cls": Nanny, "options": {**common, "name": f"cpu{i}", "env": {"CUDA_VISIBLE_DEVICES": "", "P2T_DEVICES": ""}}}
            for i in range(cpu_workers)}


def local_cluster(threads: int = 1, cpu_workers: int | None = None) -> Any:
    """Start the cluster (loopback only, no dashboard) and return it; close it with .close()."""
    from distributed import Scheduler, SpecCluster

    gpus = discover_devices()
    n_cpu = cpu_workers if cpu_workers is not None else int(os.environ.get(CPU_WORKERS_ENV) or 1)
    scheduler = {"cls": Scheduler, "options": {"host": "127.0.0.1", "dashboard": False}}
    return SpecCluster(workers=worker_specs(gpus, n_cpu, threads), scheduler=scheduler, silence_logs=logging.ERROR,
                       name="pytorch-to-triton")
