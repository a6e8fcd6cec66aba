"""sandbox_host.py, the server's half of the sandbox, on real processes and files: what a call leaves running is
found through /proc (also a child that left the session) and killed, the worker itself is spared; the scratch is
emptied but kept; the switch reads P2T_SANDBOX."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytorch_to_triton import sandbox_host

PARENT = r'''
import subprocess, sys, time
sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
a = subprocess.Popen(sleep)
b = subprocess.Popen(sleep, start_new_session=True)
print(a.pid, b.pid, flush=True)
time.sleep(60)
'''


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:].split()[0] not in (b"Z", b"X")


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs Linux /proc")
def test_leftovers_are_killed_and_the_worker_is_spared() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        kids = [int(x) for x in parent.stdout.readline().split()]
        assert sandbox_host.descendants(parent.pid) >= set(kids)
        assert sandbox_host.kill_leftovers(parent.pid) >= 2
        end = time.monotonic() + 5
        while any(_alive(k) for k in kids) and time.monotonic() < end:
            time.sleep(0.05)
        assert not any(_alive(k) for k in kids)
        assert parent.poll() is None  # the worker stays
        assert sandbox_host.kill_leftovers(parent.pid) == 0
    finally:
        parent.kill()
        parent.wait()


def test_after_call_empties_the_scratch_and_notes_the_kill(tmp_path: Path) -> None:
    # A "worker" of our own that starts nothing: not this test process, whose children in a full run are the
    # session's warm workers (after_call would kill them, and note it).
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        root = sandbox_host.scratch_root(tmp_path, worker.pid)
        (root / "sub").mkdir(parents=True)
        (root / "sub" / "f.bin").write_bytes(b"x" * 100)
        (root / "g.txt").write_text("y")
        result: dict = {"notes": []}
        sandbox_host.after_call(worker.pid, tmp_path, result)  # the worker left no process running: no kill note
        assert root.is_dir() and list(root.iterdir()) == []
        assert result == {"notes": []}
        assert worker.poll() is None  # the worker itself is spared
    finally:
        worker.kill()
        worker.wait()
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    try:
        parent.stdout.readline()  # its two children run
        result = {"notes": []}
        sandbox_host.after_call(parent.pid, tmp_path, result)
        assert result["sandbox_killed"] == 2 and "left 2 process(es) running" in result["notes"][0]
    finally:
        parent.kill()
        parent.wait()


def test_switch_and_worker_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("P2T_SANDBOX", raising=False)
    assert sandbox_host.default_on()
    monkeypatch.setenv("P2T_SANDBOX", "0")
    assert not sandbox_host.default_on()
    monkeypatch.setenv("P2T_SANDBOX_FILE_BYTES", "123")
    on = sandbox_host.worker_env(True)
    assert on["P2T_SANDBOX"] == "1" and on["TORCHINDUCTOR_COMPILE_THREADS"] == "1"
    assert on["P2T_SANDBOX_FILE_BYTES"] == "123"
    assert sandbox_host.worker_env(False) == {"P2T_SANDBOX": "0"}


def test_the_gpu_default_is_one_constant_and_the_opt_outs_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    """GPU_CONFINED_BY_DEFAULT decides a GPU slot's default; P2T_SANDBOX=1 confines and a sandbox turned off
    (--no-sandbox, P2T_SANDBOX=0: Limits(sandbox=False)) stays off whatever the constant says; CPU slots ignore it."""
    monkeypatch.delenv("P2T_SANDBOX", raising=False)
    monkeypatch.setattr(sandbox_host, "GPU_CONFINED_BY_DEFAULT", False)
    assert sandbox_host.on_for("cuda:0", True) == (False, sandbox_host.GPU_OFF_WHY)
    assert sandbox_host.on_for("cpu", True) == (True, None)
    monkeypatch.setenv("P2T_SANDBOX", "1")
    assert sandbox_host.on_for("cuda:0", True) == (True, None)
    monkeypatch.delenv("P2T_SANDBOX")
    monkeypatch.setattr(sandbox_host, "GPU_CONFINED_BY_DEFAULT", True)
    assert sandbox_host.on_for("cuda:0", True) == (True, None)
    assert sandbox_host.on_for("cuda:1", False) == (False, None)  # --no-sandbox / P2T_SANDBOX=0
    monkeypatch.setenv("P2T_SANDBOX", "0")
    assert not sandbox_host.default_on()


def test_disk_filled_only_when_this_call_filled_it(tmp_path: Path) -> None:
    free = sandbox_host.free_bytes(tmp_path)
    assert free > 0
    assert not sandbox_host.disk_filled(tmp_path, free)  # nothing written
    assert not sandbox_host.disk_filled(tmp_path, -1)  # unknown at start: never
