"""ClusterPool: the WorkerPool interface (call, slots, device_names, prestart, close) over a Dask cluster.

Each call becomes one Dask task (plugin.run_call) that asks for resources GPU=1 (a benchmark: alone on its GPU) or
GPU=1/pack (validation, KernelBench's criterion, audit's compiled part: `pack` of them may share a GPU, P2T_PACK_VALIDATIONS,
default 1). The files it needs travel with it (shipping.py). Progress comes back through Dask's event log and is
delivered by the calling thread. A Dask worker lost mid-task: Dask runs the task again elsewhere (up to
distributed.scheduler.allowed-failures times), and the caller sees one answer. A lost scheduler: the client reconnects
(within `reconnect_s`) and the call is submitted again; if the scheduler does not come back, ClusterLost stops the call
the way a cancel does, so a suite stops with its finished units journaled and resumes when called again.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import CancelledError
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError, WorkerError
from . import shipping

EventCallback = Callable[[dict[str, Any]], None]
PACK_ENV = "P2T_PACK_VALIDATIONS"
RECONNECT_ENV = "P2T_CLUSTER_RECONNECT_S"  # how long a lost scheduler may take to come back (default CONNECT_S)
CONNECT_S = 60.0
INSTALL_HINT = "pip install 'pytorch-to-triton[cluster]' (dask and distributed) here and on every GPU host"


class ClusterLost(WorkerError):
    """The scheduler went away and did not come back; behaves as a cancel (kind 'cancelled') so nothing is recorded
    as a kernel's verdict."""

    def __init__(self, message: str):
        super().__init__("cancelled", message)


@dataclass
class Lane:
    """One GPU of the cluster (one Dask worker with resources GPU=1), as the suite and the service see it."""

    name: str  # 'cuda:3@host', or 'cpu@host:port' for a worker without a GPU (it runs the interpreter)
    address: str


class ClusterPool:
    """Calls on a Dask cluster: `address` is tcp://scheduler:8786, or 'local' for one worker per GPU here."""

    def __init__(self, address: str, workspace_root: Path, state_dir: Path, *, pack: int | None = None,
                 connect_s: float = CONNECT_S, reconnect_s: float | None = None):
        try:
            from distributed import Client
        except ImportError:
            raise UsageError(f"--cluster needs dask and distributed: {INSTALL_HINT}") from None
        self.root = Path(workspace_root).resolve()
        self.address = address
        self.pack = max(1, int(pack or os.environ.get(PACK_ENV) or 1))
        self.reconnect_s = float(reconnect_s if reconnect_s is not None else os.environ.get(RECONNECT_ENV) or connect_s)
        self._events: dict[str, queue.Queue[dict[str, Any]]] = {}
        self._next_check = self._no_worker_since = 0.0
        self._reconnect_lock = threading.Lock()  # every suite thread's call sees the loss; one sets things up again
        self._cluster: Any = None
        if address == "local":
            from .local import local_cluster

            self._cluster = local_cluster(threads=self.pack)
        try:
            self.client = Client(self._cluster or address, timeout=self.reconnect_s, set_as_default=False)
        except (OSError, TimeoutError) as e:
            self._close_cluster()
            raise UsageError(f"cannot reach the Dask scheduler at {address} ({type(e).__name__}: {e}); start it with "
                             "`dask scheduler`, check the address (tcp://host:8786), or use --cluster local") from None
        try:
            self._setup(connect_s)
        except BaseException:
            self.close()
            raise

    # ---- connection ---------------------------------------------------------------------------------------------
    def _setup(self, wait_s: float) -> None:
        """Subscribe to progress, register the plugin (once per cluster), and learn the lanes."""
        from .plugin import PLUGIN_NAME, PROGRESS_TOPIC, ProjectWorkerPlugin

        self.client.subscribe_topic(PROGRESS_TOPIC, self._on_progress)
        deadline = time.monotonic() + wait_s
        while not self._gpu_workers():
            if time.monotonic() > deadline:
                raise UsageError(f"no Dask worker with resources GPU=1 joined the scheduler at {self.address} within "
                                 f"{wait_s:.0f} s; on each GPU host run: CUDA_VISIBLE_DEVICES=<i> dask worker "
                                 f"{self.address} --resources GPU=1 --nthreads 1 (one per GPU)")
            time.sleep(0.2)
        self.client.register_plugin(ProjectWorkerPlugin(), name=PLUGIN_NAME)  # idempotent: keeps warm workers
        self._refresh_lanes()

    def _gpu_workers(self) -> list[str]:
        try:
            info = self.client.scheduler_info(n_workers=-1)  # newer distributed lists only 5 workers by default
        except TypeError:  # older distributed: always all of them
            info = self.client.scheduler_info()
        workers = info.get("workers", {})
        return sorted(a for a, w in workers.items() if (w.get("resources") or {}).get("GPU", 0) >= 1)

    def _refresh_lanes(self) -> None:
        from .plugin import lane

        info = self.client.run(lane, workers=self._gpu_workers())
        self.lanes = [Lane(d["name"], addr) for addr, d in sorted(info.items())]

    def _reconnected(self) -> bool:
        """Wait for the client to reconnect after a lost scheduler and for a GPU worker to join again."""
        deadline = time.monotonic() + self.reconnect_s
        with self._reconnect_lock:
            while time.monotonic() < deadline:
                if self.client.status == "running":
                    try:
                        self._setup(max(1.0, deadline - time.monotonic()))
                        return True
                    except (UsageError, OSError, TimeoutError):
                        return False
                if self.client.status in ("closed", "closing"):
                    return False
                time.sleep(0.2)
        return False

    def _on_progress(self, event: Any) -> None:
        _, msg = event
        q = self._events.get(msg.get("call", "")) if isinstance(msg, dict) else None
        if q is not None:
            q.put(msg)

    # ---- the WorkerPool interface -------------------------------------------------------------------------------
    @property
    def slots(self) -> list[Lane]:
        """One entry per concurrent call the cluster takes: each GPU lane, `pack` times (the suite runs one thread
        per entry)."""
        return [ln for ln in self.lanes for _ in range(self.pack)]

    def device_names(self) -> list[str]:
        """The lanes' names (a `device` argument naming one prefers that GPU)."""
        return [ln.name for ln in self.lanes]

    def prestart(self) -> None:
        """Nothing to do: the plugin started each GPU's project worker when it was registered."""

    def resources(self, op: str) -> dict[str, float]:
        """What a call asks of its Dask worker: a benchmark the whole GPU (its timings never share it), anything
        else 1/pack of it."""
        return {"GPU": 1.0 if op == "benchmark" else 1.0 / self.pack}

    def call(self, op: str, args: dict[str, Any], *, timeout_s: float, device: str | None = None,
             on_event: EventCallback | None = None, cancel: Any = None) -> dict[str, Any]:
        """Run one request on a cluster GPU; the result names the lane as `worker_device` and carries `cluster`
        timings (bundle size, shipping, queue + scheduling overhead)."""
        from distributed import KilledWorker

        from .plugin import cancel_call, run_call

        bundle = shipping.pack(args, self.root)
        call_id = uuid.uuid4().hex
        events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._events[call_id] = events
        resources = self.resources(op)
        pin = [ln.address for ln in self.lanes if device and ln.name == device]
        t0 = time.monotonic()
        attempts = 0
        try:
            while True:
                attempts += 1
                fut = self.client.submit(run_call, op, args, bundle.files, bundle.digest, str(self.root), timeout_s,
                                         call_id, key=f"p2t-{op}-{call_id}-{attempts}", pure=False,
                                         resources=resources, workers=pin or None, allow_other_workers=bool(pin))
                try:
                    out = self._wait(fut, events, on_event, cancel, call_id, cancel_call)
                    break
                except (CancelledError, asyncio.CancelledError):
                    if not self._reconnected():
                        raise ClusterLost(
                            f"lost the Dask scheduler at {self.address} and it did not come back within "
                            f"{self.reconnect_s:.0f} s; work already finished is kept (a suite's journal): restart the "
                            "scheduler and its workers, then call again to resume") from None
                except KilledWorker as e:
                    raise WorkerError("crashed", f"the Dask worker running this call died too often ({e}); look at "
                                      "the worker's log (host memory, a killed process)") from None
        finally:
            self._events.pop(call_id, None)
        wall = time.monotonic() - t0
        if "usage" in out:
            raise UsageError(out["usage"])
        if "error" in out:
            err = out["error"]
            e = WorkerError(err["kind"], err["message"], err.get("stderr_tail", ""), err.get("last_event"))
            e.device = err.get("device")  # type: ignore[attr-defined]
            e.runtime = err.get("runtime")  # type: ignore[attr-defined]
            if err.get("progress"):
                e.progress = err["progress"]  # type: ignore[attr-defined]
            raise e
        res = out["result"]
        res["cluster"] = {"wall_s": round(wall, 4), "ship_s": res.pop("ship_s", None), "call_s": res.get("call_s"),
                          "overhead_s": round(wall - (res.pop("call_s", None) or 0.0), 4), "attempts": attempts,
                          "bundle_files": len(bundle.files), "bundle_bytes": bundle.size, "bundle": bundle.digest}
        return res

    def _wait(self, fut: Any, events: queue.Queue[dict[str, Any]], on_event: EventCallback | None, cancel: Any,
              call_id: str, cancel_call: Callable[..., Any]) -> dict[str, Any]:
        """The task's answer, delivering its progress from this thread; a cancel stops it on its worker."""
        while True:
            while True:
                try:
                    msg = events.get_nowait()
                except queue.Empty:
                    break
                if on_event is not None:
                    on_event({"type": "progress", "message": f"{msg.get('message', '')} [{msg.get('lane')}]",
                              "progress": msg.get("progress"), "total": msg.get("total")})
            if cancel is not None and cancel.is_set():
                fut.cancel()
                try:
                    self.client.run(cancel_call, call_id)
                except Exception:  # noqa: BLE001 - best effort: the task's own timeout still bounds it
                    pass
                raise WorkerError("cancelled", "the call was cancelled; its project worker on the cluster was stopped")
            try:
                return fut.result(timeout=0.2)
            except TimeoutError:
                pass
            now = time.monotonic()
            if now >= self._next_check:  # every few seconds: is there still a GPU worker to run it?
                self._next_check = now + 5.0
                if self.client.status == "running" and not self._gpu_workers():
                    self._no_worker_since = self._no_worker_since or now
                    if now - self._no_worker_since > self.reconnect_s:
                        fut.cancel()
                        raise ClusterLost(f"no Dask worker with resources GPU=1 left at {self.address} for "
                                          f"{self.reconnect_s:.0f} s; start workers (dask worker {self.address} "
                                          "--resources GPU=1), then call again (a suite resumes from its journal)")
                else:
                    self._no_worker_since = 0.0

    def close(self) -> None:
        """Close the client (the cluster's workers keep their warm project workers), and a local cluster."""
        try:
            self.client.close()
        except Exception:  # noqa: BLE001 - closing after a lost scheduler must not raise
            pass
        self._close_cluster()

    def _close_cluster(self) -> None:
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
