"""Calls and suites on a real Dask cluster (cluster/): LocalCluster workers and `dask scheduler` / `dask worker`
processes on loopback, every kernel under Triton's interpreter. Fixtures: tests/cluster_fixtures (labelled)."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import distributed
import pytest

from pytorch_to_triton.cluster import shipping
from pytorch_to_triton.service import Service
from pytorch_to_triton.suite import run_suite

FIXTURES = Path(__file__).parent / "cluster_fixtures"
ENV = {"P2T_SPARE_WORKER": "0"}  # one project worker per Dask worker: two cores are shared by everything here


def _task(folder: Path, *candidates: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    # the folder's name in the reference: suite units are keyed by content, and each problem must be its own
    (folder / "reference.py").write_text((FIXTURES / "reference.py").read_text() + f"\n# {folder.name}\n")
    for c in candidates:
        (folder / c).write_text((FIXTURES / c).read_text())
    return folder


# ---- shipping (plain Python, no cluster) ---------------------------------------------------------------------------

def test_bundle_ships_named_files_sidecar_and_small_siblings(tmp_path: Path) -> None:
    task = _task(tmp_path / "task", "good.py", "wrong.py")
    (task / "reference.p2t.toml").write_text('notes = "x"\n')
    big = tmp_path / "big"
    big.mkdir()
    for i in range(shipping.SIBLING_MAX_FILES + 1):  # a KernelBench level folder: siblings stay home
        (big / f"p{i}.py").write_text("x = 1\n")
    args = {"workspace": str(tmp_path), "reference": str(task / "reference.py"), "candidate": str(task / "good.py"),
            "trials": 1}
    b = shipping.pack(args, tmp_path)
    assert set(b.files) == {"task/reference.py", "task/good.py", "task/wrong.py", "task/reference.p2t.toml"}
    assert shipping.pack(args, tmp_path).digest == b.digest
    b2 = shipping.pack({**args, "candidate": str(big / "p0.py")}, tmp_path)
    assert "big/p0.py" in b2.files and "big/p1.py" not in b2.files
    (task / "good.py").write_text((task / "good.py").read_text() + "\n# changed\n")
    assert shipping.pack(args, tmp_path).digest != b.digest  # content, not names, decides

    remote = shipping.materialize(b.files, b.digest, tmp_path / "scratch")
    assert remote == tmp_path / "scratch" / "ws" / b.digest
    assert (remote / "task" / "good.py").read_bytes() == b.files["task/good.py"]
    wargs = shipping.rewrite(args, str(tmp_path), remote)
    assert wargs["workspace"] == str(remote) and wargs["candidate"] == str(remote / "task" / "good.py")
    assert wargs["trials"] == 1
    back = shipping.map_back({"tb": f'File "{remote}/task/good.py", line 3'}, remote, str(tmp_path))
    assert back == {"tb": f'File "{tmp_path}/task/good.py", line 3'}


# ---- a LocalCluster of two worker processes -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    env = {**ENV, "P2T_CLUSTER_SCRATCH": str(tmp_path_factory.mktemp("scratch"))}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the worker processes inherit it
    cl = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, resources={"GPU": 1},
                                  host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR)
    try:
        yield cl
    finally:
        cl.close()
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_calls_run_on_both_workers_with_the_files_shipped(cluster: Any, tmp_path: Path) -> None:
    _task(tmp_path / "task", "good.py", "wrong.py", "crash.py")
    svc = Service(tmp_path, cluster=cluster.scheduler_address)
    try:
        lanes = svc.pool.device_names()
        assert len(lanes) == 2 and all(n.startswith("cpu@127.0.0.1:") for n in lanes), lanes
        reps: list[Any] = []

        def one() -> None:
            reps.append(svc.validate(reference="task/reference.py", candidates=["task/good.py"], trials=1))

        threads = [threading.Thread(target=one) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(r.ok and r.interpreter for r in reps), [r.summary for r in reps]
        assert {r.device for r in reps} == set(lanes)  # one GPU lane each: two calls at once use both workers
        assert all(r.runtime["dask_worker"].startswith("tcp://127.0.0.1:") and r.runtime["host"] for r in reps)
        shipped = reps[0].candidates[0].model_extra["cluster"]
        assert shipped["attempts"] == 1 and shipped["bundle_bytes"] > 0
        scratch = Path(os.environ["P2T_CLUSTER_SCRATCH"]) / "ws" / shipped["bundle"]
        assert (scratch / "task" / "good.py").read_text() == (tmp_path / "task" / "good.py").read_text()

        wrong = svc.validate(reference="task/reference.py", candidates=["task/wrong.py"], trials=1)
        assert not wrong.ok and wrong.candidates[0].findings[0].severity == "fail"
        # A crash is the kernel's verdict, said where it ran; Dask does not run it again elsewhere.
        crash = svc.validate(reference="task/reference.py", candidates=["task/crash.py"], trials=1)
        assert not crash.ok and crash.candidates[0].findings[0].check == "crashed"
        assert crash.candidates[0].error["device"] in lanes
        assert str(tmp_path) in crash.candidates[0].error["stderr_tail"] or not crash.candidates[0].error["stderr_tail"]
    finally:
        svc.close()


# Long end-to-end run (over a minute on 2 cores): the corpus command; the default command keeps a real LocalCluster
# (test_calls_run_on_both_workers_with_the_files_shipped) and a CLI-started scheduler and worker
# (test_client_without_gpu_validates_and_benchmarks_remotely).
@pytest.mark.corpus
def test_packed_validations_share_a_gpu_benchmarks_do_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """P2T_PACK_VALIDATIONS=2 on one worker of 2 threads: two validations run at once, each in a project worker of
    its own; a benchmark asks for the whole GPU."""
    monkeypatch.setenv("P2T_PACK_VALIDATIONS", "2")
    monkeypatch.setenv("P2T_SPARE_WORKER", "0")
    monkeypatch.setenv("P2T_CLUSTER_SCRATCH", str(tmp_path / "scratch"))
    _task(tmp_path / "task", "slow_good.py")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, resources={"GPU": 1},
                                  host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR) as cl:
        svc = Service(tmp_path, cluster=cl.scheduler_address)
        try:
            assert len(svc.pool.slots) == 2  # one GPU lane, taken twice: a suite runs two units on it at once
            seen: list[dict[str, float]] = []

            def watch() -> None:
                with distributed.Client(cl.scheduler_address, set_as_default=False) as c:
                    for _ in range(600):
                        seen.extend(c.run_on_scheduler(_restrictions).values())
                        time.sleep(0.05)
                        if len(seen) >= 2:
                            return

            w = threading.Thread(target=watch, daemon=True)
            w.start()
            reps: list[Any] = []
            threads = [threading.Thread(target=lambda: reps.append(svc.validate(
                reference="task/reference.py", candidates=["task/slow_good.py"], trials=1))) for _ in range(2)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            w.join(timeout=5)
            assert all(r.ok for r in reps) and len({r.device for r in reps}) == 1
            assert {"GPU": 0.5} in seen, seen
            assert svc.pool.resources("benchmark") == {"GPU": 1.0} and svc.pool.resources("validate") == {"GPU": 0.5}
            slots = svc.pool.client.run(_slot_count)
            assert list(slots.values()) == [2], slots  # the two ran at once, in two project workers
        finally:
            svc.close()


def _restrictions(dask_scheduler: Any) -> dict[str, dict[str, float]]:
    return {str(k): dict(ts.resource_restrictions or {}) for k, ts in dask_scheduler.tasks.items()
            if str(k).startswith("p2t-")}


def _slot_count(dask_worker: Any) -> int:
    from pytorch_to_triton.cluster.plugin import PLUGIN_NAME

    return len(dask_worker.plugins[PLUGIN_NAME].slots)


def _journal_rows(ws: Path, name: str) -> list[dict[str, Any]]:
    path = ws / ".pytorch-to-triton" / "suites" / name / "results.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# Long end-to-end run (over a minute on 2 cores): the corpus command; the default command keeps a real LocalCluster
# (test_calls_run_on_both_workers_with_the_files_shipped) and a CLI-started scheduler and worker
# (test_client_without_gpu_validates_and_benchmarks_remotely).
@pytest.mark.corpus
def test_worker_killed_mid_suite_retried_elsewhere_counted_once(cluster: Any, tmp_path: Path) -> None:
    for p in ("p1", "p2"):
        _task(tmp_path / "corpus" / p, "slow_good.py", "wrong.py")
    svc = Service(tmp_path, cluster=cluster.scheduler_address)
    killer_client = distributed.Client(cluster.scheduler_address, set_as_default=False)
    killed: list[str] = []

    def kill_a_busy_worker() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            busy = {w: ks for w, ks in killer_client.processing().items()
                    if any(str(k).startswith("p2t-validate") for k in ks)}
            if busy:
                time.sleep(1.0)  # mid-task: the project worker is running the candidate
                w = sorted(busy)[0]
                pid = killer_client.run(os.getpid, workers=[w])[w]
                os.kill(pid, signal.SIGKILL)
                killed.append(w)
                return
            time.sleep(0.2)

    killer = threading.Thread(target=kill_a_busy_worker, daemon=True)
    killer.start()
    try:
        rep = run_suite(svc, directory="corpus", name="killed", trials=1, kernelbench=False)
    finally:
        killer.join(timeout=5)
        killer_client.close()
        svc.close()
    assert killed, "no validation task was seen running"
    verdicts = {(r.problem, r.candidate): r.verdict for r in rep.rows}
    assert verdicts == {("p1", "slow_good.py"): "pass", ("p1", "wrong.py"): "fail",
                        ("p2", "slow_good.py"): "pass", ("p2", "wrong.py"): "fail"}, rep.summary
    journal = _journal_rows(tmp_path, "killed")
    assert len(journal) == 4 and len({r["key"] for r in journal}) == 4, journal  # never lost, never twice


# Long end-to-end run (over a minute on 2 cores): the corpus command; the default command keeps a real LocalCluster
# (test_calls_run_on_both_workers_with_the_files_shipped) and a CLI-started scheduler and worker
# (test_client_without_gpu_validates_and_benchmarks_remotely).
@pytest.mark.corpus
def test_cluster_local_pins_one_worker_per_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--cluster local` over two GPUs (ids only here: without CUDA their workers run the interpreter): one Dask
    worker per GPU, each pinned to its own, and a suite spread over both."""
    monkeypatch.setenv("P2T_DEVICES", "0,1")
    monkeypatch.setenv("P2T_SPARE_WORKER", "0")
    monkeypatch.setenv("P2T_CLUSTER_SCRATCH", str(tmp_path / "scratch"))
    for p in ("p1", "p2"):
        _task(tmp_path / "corpus" / p, "slow_good.py")
    svc = Service(tmp_path, cluster="local")
    try:
        host = socket.gethostname()
        assert sorted(svc.pool.device_names()) == [f"cuda:0@{host}", f"cuda:1@{host}"]
        rep = run_suite(svc, directory="corpus", name="local", trials=1, kernelbench=False, benchmark=False)
    finally:
        svc.close()
    assert [r.verdict for r in rep.rows] == ["pass", "pass"], rep.summary
    assert sum(len(v) for v in rep.spread["per_device"].values()) == 2
    assert set(rep.spread["per_device"]) <= {f"cuda:0@{host}", f"cuda:1@{host}"}


# ---- `dask scheduler` + `dask worker` processes: a scheduler restart, a client without a GPU -------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CliCluster:
    """A scheduler and one `dask worker --resources GPU=1` started from the command line, each in its own group."""

    def __init__(self, scratch: Path):
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.env = {**os.environ, **ENV, "P2T_CLUSTER_SCRATCH": str(scratch), "CUDA_VISIBLE_DEVICES": ""}
        self.procs: list[subprocess.Popen] = []

    def start(self) -> None:
        """Start the scheduler, then the worker."""
        self.procs = [self._spawn("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(self.port),
                                  "--no-dashboard")]
        self.procs.append(self._spawn("distributed.cli.dask_worker", self.address, "--resources", "GPU=1",
                                      "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"))

    def _spawn(self, module: str, *args: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", module, *args], env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)

    def kill(self) -> None:
        """SIGKILL every process of the scheduler's and the worker's groups."""
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(timeout=30)
        self.procs = []


def _cli(ws: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytorch_to_triton", *args, "--workspace", str(ws)], env=env,
                          cwd=ws, capture_output=True, text=True, timeout=timeout)


@pytest.fixture()
def cli_cluster(tmp_path: Path) -> Iterator[CliCluster]:
    cl = CliCluster(tmp_path / "scratch")
    cl.start()
    try:
        yield cl
    finally:
        cl.kill()


# Long end-to-end run (over a minute on 2 cores): the corpus command; the default command keeps a real LocalCluster
# (test_calls_run_on_both_workers_with_the_files_shipped) and a CLI-started scheduler and worker
# (test_client_without_gpu_validates_and_benchmarks_remotely).
@pytest.mark.corpus
def test_scheduler_restart_then_resume_runs_only_the_rest(cli_cluster: CliCluster, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for p in ("p1", "p2", "p3"):
        _task(ws / "corpus" / p, "slow_good.py")
    env = {**os.environ, "P2T_CLUSTER_RECONNECT_S": "3", "CUDA_VISIBLE_DEVICES": ""}
    cmd = [sys.executable, "-m", "pytorch_to_triton", "suite", "corpus", "--name", "restart", "--no-kernelbench",
           "--trials", "1", "--cluster", cli_cluster.address, "--workspace", str(ws), "--json"]
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ws)
    deadline = time.monotonic() + 180
    while not _journal_rows(ws, "restart") and time.monotonic() < deadline and first.poll() is None:
        time.sleep(0.2)
    before = _journal_rows(ws, "restart")
    assert before and first.poll() is None, "the first unit never finished"
    cli_cluster.kill()  # the scheduler (and its worker) go away mid-suite
    _, err = first.communicate(timeout=120)
    assert first.returncode == 2 and "lost the Dask scheduler" in err, err[-2000:]
    done_first = _journal_rows(ws, "restart")
    assert all(r["verdict"] == "pass" for r in done_first) and len(done_first) < 3

    cli_cluster.start()  # same address, fresh scheduler
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240, cwd=ws)
    assert second.returncode == 0, second.stderr[-2000:]
    rep = json.loads(second.stdout)
    assert rep["counts"]["resumed"] == len(done_first) and rep["counts"]["run"] == 3 - len(done_first)
    journal = _journal_rows(ws, "restart")
    assert len(journal) == 3 and len({r["key"] for r in journal}) == 3  # each unit journaled once


# Long end-to-end run (over a minute on 2 cores): the corpus command; the default command keeps a real LocalCluster
# (test_calls_run_on_both_workers_with_the_files_shipped) and a CLI-started scheduler and worker
# (test_client_without_gpu_validates_and_benchmarks_remotely).
@pytest.mark.corpus
def test_scheduler_back_within_the_window_the_suite_goes_on(cli_cluster: CliCluster, tmp_path: Path) -> None:
    """The scheduler (and its worker) restarted while a unit runs: the client reconnects, submits the unit again, and
    the same suite call ends with every unit once."""
    ws = tmp_path / "ws"
    for p in ("p1", "p2", "p3"):
        _task(ws / "corpus" / p, "slow_good.py")
    env = {**os.environ, "P2T_CLUSTER_RECONNECT_S": "90", "CUDA_VISIBLE_DEVICES": ""}
    cmd = [sys.executable, "-m", "pytorch_to_triton", "suite", "corpus", "--name", "back", "--no-kernelbench",
           "--trials", "1", "--cluster", cli_cluster.address, "--workspace", str(ws), "--json"]
    run = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ws)
    deadline = time.monotonic() + 180
    while not _journal_rows(ws, "back") and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.2)
    assert _journal_rows(ws, "back") and run.poll() is None, "the first unit never finished"
    cli_cluster.kill()
    cli_cluster.start()
    out, err = run.communicate(timeout=240)
    assert run.returncode == 0, err[-3000:]
    rep = json.loads(out)
    assert [r["verdict"] for r in rep["rows"]] == ["pass"] * 3 and rep["counts"]["run"] == 3
    journal = _journal_rows(ws, "back")
    assert len(journal) == 3 and len({r["key"] for r in journal}) == 3


def test_client_without_gpu_validates_and_benchmarks_remotely(cli_cluster: CliCluster, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _task(ws / "task", "good.py")
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "P2T_DEVICES": ""}  # the client's machine has no GPU
    res = _cli(ws, "validate", "task/reference.py", "task/good.py", "--trials", "1", "--json",
               "--cluster", cli_cluster.address, env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    rep = json.loads(res.stdout)
    assert rep["ok"] and rep["runtime"]["dask_worker"].startswith("tcp://127.0.0.1:") and rep["runtime"]["host"]
    bundle = rep["candidates"][0]["cluster"]["bundle"]
    assert (tmp_path / "scratch" / "ws" / bundle / "task" / "good.py").is_file()  # ran on the shipped copy
    # Locally a client without a GPU does not time: it answers the roofline ESTIMATE (issue 29 item 7; on a GPU host
    # with the GPUs hidden, its CPU worker refuses). With --cluster the call goes to the worker, which has none here
    # either and says so (on a GPU worker it times).
    local = _cli(ws, "bench", "task/reference.py", "task/good.py", env=env)
    if Path("/dev/nvidiactl").exists():
        assert local.returncode == 2 and "the worker found none" in local.stderr, local.stderr[-2000:]
    else:
        assert local.returncode == 0 and "ESTIMATE only (no GPU)" in local.stdout, local.stderr[-2000:]
    remote = _cli(ws, "bench", "task/reference.py", "task/good.py", "--cluster", cli_cluster.address, env=env)
    assert remote.returncode == 2 and "the worker found none" in remote.stderr, remote.stderr[-2000:]


def test_cluster_unreachable_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytorch_to_triton.errors import UsageError

    monkeypatch.setenv("P2T_CLUSTER_RECONNECT_S", "2")
    with pytest.raises(UsageError, match="dask scheduler"):
        Service(tmp_path, cluster=f"tcp://127.0.0.1:{_free_port()}").close()


# Long end-to-end run (over a minute on 2 cores): the corpus command; the default command keeps a real LocalCluster
# (test_calls_run_on_both_workers_with_the_files_shipped) and a CLI-started scheduler and worker
# (test_client_without_gpu_validates_and_benchmarks_remotely).
@pytest.mark.corpus
def test_serve_cluster_local_over_stdio(tmp_path: Path) -> None:
    """`serve --cluster local` as an assistant starts it: the cluster's worker processes never write to stdout (the
    protocol channel), and run_validation answers from a Dask worker."""
    import anyio
    from mcp import Client, StdioServerParameters

    _task(tmp_path / "task", "good.py")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "PYTHONPATH", "VIRTUAL_ENV", "LANG")}
    env.update(ENV, P2T_CLUSTER_SCRATCH=str(tmp_path / "scratch"), P2T_DEVICES="")
    params = StdioServerParameters(command=sys.executable, env=env, cwd=str(tmp_path),
                                   args=["-m", "pytorch_to_triton", "serve", "--workspace", str(tmp_path),
                                         "--cluster", "local"])

    async def go() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            res = await client.call_tool("run_validation", {"reference": "task/reference.py",
                                                            "candidates": ["task/good.py"], "trials": 1})
            assert res.structured_content["ok"] is True, res.content
            assert res.structured_content["runtime"]["dask_worker"].startswith("tcp://127.0.0.1:")

    anyio.run(go)
