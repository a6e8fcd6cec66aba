"""On each Dask worker: one warm project worker pinned to that worker's GPU, and the task every call becomes.

The Dask worker itself never imports torch: like the MCP server, it drives a project worker process
(worker_client.WorkerSlot, `python -m pytorch_to_triton.worker`), which a Dask WorkerPlugin owns, so a warm call stays
warm and a crashed or timed-out kernel costs that subprocess, never the Dask worker. The GPU is the first one
`discover_devices()` sees in the Dask worker's environment (pin it with CUDA_VISIBLE_DEVICES). Validations packed onto
one GPU (tasks asking for a fraction of resource GPU) each get a slot of their own; slot 0 stays the warm one.

Scratch (P2T_CLUSTER_SCRATCH, default <tmp>/pytorch-to-triton-cluster): ws/<bundle hash>/ (shipped files),
state/<gpu>/ (Triton and inductor caches, peaks.json) kept across calls and Dask worker restarts.
"""

from __future__ import annotations

import multiprocessing
import os
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from distributed import get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from ..errors import UsageError, WorkerError
from ..worker_client import Limits, WorkerSlot, discover_devices
from . import shipping

PLUGIN_NAME = "pytorch-to-triton"
PROGRESS_TOPIC = "p2t-progress"


def scratch_base() -> Path:
    """Where shipped workspaces and per-GPU state live on this host."""
    return Path(os.environ.get("P2T_CLUSTER_SCRATCH") or Path(tempfile.gettempdir()) / "pytorch-to-triton-cluster")


def describe(address: str = "") -> dict[str, Any]:
    """This Dask worker's host, GPU and lane name ('cuda:3@host', or 'cpu@host:port' without a GPU)."""
    devs = discover_devices()
    host = socket.gethostname()
    gpu = devs[0] if devs else None
    where = address.split("://")[-1] or f"{host}:{os.getpid()}"
    name = f"cuda:{gpu}@{host}" if gpu is not None else f"cpu@{where}"
    return {"host": host, "gpu": gpu, "name": name, "address": address, "pid": os.getpid()}


class ProjectWorkerPlugin(WorkerPlugin):
    """Owns this Dask worker's project worker(s): started at setup, stopped at teardown."""

    idempotent = True  # registering it again (a second client, a reconnect) keeps the warm worker

    def __init__(self) -> None:  # travels pickled to every worker: the state is made in setup()
        self.info: dict[str, Any] = {}
        self.slots: list[WorkerSlot] = []
        self.cancels: dict[str, threading.Event] = {}
        self.worker: Any = None

    def setup(self, worker: Any = None) -> None:
        """Start the warm project worker in the background (torch imports while the first task is on its way)."""
        self.worker = worker
        self._lock = threading.Lock()
        if multiprocessing.parent_process() is not None:
            # A Nanny's child inherits the stdout of whoever started the cluster: under `serve --cluster local` that
            # is the MCP protocol channel, so nothing here may write to it.
            os.dup2(2, 1)
        self.info = describe(getattr(worker, "address", "") or "")
        self.base = scratch_base()
        self.slots = [self._new_slot(0)]
        self.slots[0].prestart()

    def _new_slot(self, i: int) -> WorkerSlot:
        gpu = self.info.get("gpu")
        state = self.base / "state" / (f"gpu{gpu}" if gpu is not None else "cpu")
        state.mkdir(parents=True, exist_ok=True)
        # Packed validations (slots 1..) get no warm spare: it would hold a second CUDA context per slot.
        limits = Limits() if i == 0 else Limits(spare=False)
        return WorkerSlot("cuda:0" if gpu is not None else "cpu", gpu, state, self.base, limits)

    def teardown(self, worker: Any = None) -> None:
        """Stop every project worker this plugin started."""
        for slot in self.slots:
            slot.close()

    def acquire(self) -> WorkerSlot:
        """An idle slot, slot 0 first; a new one when every slot is busy (Dask let a packed validation in)."""
        with self._lock:
            for slot in self.slots:
                if slot.lock.acquire(blocking=False):
                    return slot
            slot = self._new_slot(len(self.slots))
            slot.lock.acquire()
            self.slots.append(slot)
            return slot


def _plugin() -> tuple[Any, ProjectWorkerPlugin]:
    worker = get_worker()
    plugin = worker.plugins.get(PLUGIN_NAME)
    if plugin is None:  # a worker that joined between registration and this task: install it here
        plugin = ProjectWorkerPlugin()
        plugin.setup(worker)
        worker.plugins[PLUGIN_NAME] = plugin
    return worker, plugin


def run_call(op: str, args: dict[str, Any], files: dict[str, bytes], digest: str, client_root: str,
             timeout_s: float, call_id: str) -> dict[str, Any]:
    """The Dask task of one tool call: write the shipped files, run `op` on the warm project worker, and return
    {"result": ...} or {"error": ...} (a WorkerError travels as data, so Dask does not retry a kernel's crash)."""
    worker, plugin = _plugin()
    t0 = time.monotonic()
    remote_root = shipping.materialize(files, digest, plugin.base)
    wargs = shipping.rewrite(args, client_root, remote_root)
    ship_s = time.monotonic() - t0
    info = plugin.info
    cancel = plugin.cancels.setdefault(call_id, threading.Event())

    def on_event(msg: dict[str, Any]) -> None:
        if msg.get("type") == "progress":
            worker.log_event(PROGRESS_TOPIC, {"call": call_id, "message": str(msg.get("message", "")),
                                              "progress": msg.get("progress"), "total": msg.get("total"),
                                              "lane": info["name"]})

    slot = plugin.acquire()
    where = {"worker_device": info["name"], "worker_host": info["host"], "dask_worker": info["address"],
             "gpu_index": info["gpu"], "ship_s": round(ship_s, 4)}
    try:
        t1 = time.monotonic()
        result = slot.call(op, wargs, timeout_s=timeout_s, on_event=on_event, cancel=cancel)
        where["call_s"] = round(time.monotonic() - t1, 4)
        result = shipping.map_back(result, remote_root, client_root)
        result.update(where, worker_restarts=slot.restarts)
        if isinstance(result.get("runtime"), dict):
            result["runtime"].update(host=info["host"], dask_worker=info["address"])
        return {"result": result}
    except UsageError as e:
        return {"usage": str(e)}
    except WorkerError as e:
        runtime = dict(slot.last_runtime or {"device": "cuda" if info["gpu"] is not None else "cpu",
                                             "interpreter": info["gpu"] is None})
        runtime.update(host=info["host"], dask_worker=info["address"])
        tail = shipping.map_back(e.stderr_tail, remote_root, client_root)
        return {"error": {"kind": e.kind, "message": str(e), "stderr_tail": tail, "last_event": e.last_event,
                          "device": info["name"], "runtime": runtime, "progress": getattr(e, "progress", None),
                          **where}}
    finally:
        slot.lock.release()
        plugin.cancels.pop(call_id, None)


def cancel_call(call_id: str, dask_worker: Any = None) -> bool:
    """Run by Client.run on every worker: stop the call `call_id` if it runs here (its project worker is killed)."""
    plugin = dask_worker.plugins.get(PLUGIN_NAME) if dask_worker is not None else None
    if plugin is None:
        return False
    plugin.cancels.setdefault(call_id, threading.Event()).set()
    return True


def lane(dask_worker: Any = None) -> dict[str, Any]:
    """Run by Client.run: what describe() says about this worker."""
    return describe(getattr(dask_worker, "address", "") or "")
