"""One worker per GPU: dispatch to idle workers, pinning with `device`, queuing on one device.

On this CPU-only machine the "GPUs" are fake device ids: each worker still gets its own
CUDA_VISIBLE_DEVICES and process, which is what the dispatch logic is about.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from pytorch_to_triton.errors import UsageError
from pytorch_to_triton.service import Service

TASKS = Path(__file__).parent / "tasks"
SLEEP_S = 4.0


def _workspace(tmp_path: Path) -> None:
    (tmp_path / "reference.py").write_text((TASKS / "add_reference.py").read_text())
    src = (TASKS / "add_stage1.py").read_text()
    src = src.replace("def reference(x, y):", f"import time\n\n\ndef reference(x, y):\n    time.sleep({SLEEP_S} / 3)", 1)
    (tmp_path / "slow.py").write_text(src)


def _parallel(svc: Service, n: int, device: str | None = None) -> tuple[float, list]:
    results: list = []

    def one() -> None:
        results.append(svc.validate(reference="reference.py", candidates=["slow.py"], trials=1,
                                    only_cases=["small"], noncontiguous=False, device=device))

    threads = [threading.Thread(target=one) for _ in range(n)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - t0, results


@pytest.mark.slow
def test_two_devices_run_in_parallel(tmp_path: Path) -> None:
    _workspace(tmp_path)
    svc = Service(tmp_path, devices=["0", "1"])
    try:
        assert svc.pool.device_names() == ["cuda:0", "cuda:1"]
        _parallel(svc, 2)  # warm both workers (cold start is not what we measure)
        elapsed, results = _parallel(svc, 2)
        assert all(r.ok for r in results), [r.summary for r in results]
        assert {r.runtime["worker_device"] for r in results} == {"cuda:0", "cuda:1"}
        assert {r.runtime.get("cuda_visible_devices") or r.runtime["worker_device"] for r in results}
        # one case x (two poisoned runs + stale check) = 3 sleeps of SLEEP_S/3 each per call
        assert elapsed < 2 * SLEEP_S, f"two calls on two devices took {elapsed:.1f}s: not parallel"
    finally:
        svc.close()


@pytest.mark.slow
def test_one_device_queues_calls(tmp_path: Path) -> None:
    _workspace(tmp_path)
    svc = Service(tmp_path, devices=["0"])
    try:
        _parallel(svc, 1)
        elapsed, results = _parallel(svc, 2)
        assert all(r.ok for r in results)
        assert elapsed >= 2 * SLEEP_S * 0.9, f"two calls on one device overlapped ({elapsed:.1f}s)"
    finally:
        svc.close()


def test_pinned_device_and_unknown_device(tmp_path: Path) -> None:
    _workspace(tmp_path)
    svc = Service(tmp_path, devices=["0", "1"])
    try:
        rep = svc.validate(reference="reference.py", candidates=["slow.py"], trials=1, only_cases=["odd_7"],
                           noncontiguous=False, device="cuda:1")
        assert rep.ok and rep.runtime["worker_device"] == "cuda:1"
        assert not svc.pool.slots[0].alive()  # the other slot was never started
        with pytest.raises(UsageError, match="not served here"):
            svc.validate(reference="reference.py", candidates=["slow.py"], device="cuda:7")
    finally:
        svc.close()
