"""Faults, bad inputs, cancellation, durability and confinement, through a real Service and real worker processes.

One Service (one worker, 1 GiB host-memory limit, 32-process limit) serves the whole module: every fault is
followed by a correct answer from the same Service, which is the point. The module runs with HOME and TMPDIR
pointing into its own temporary tree so the last test can check that nothing was written outside the workspace.
What tests/test_worker.py and tests/test_workspace.py already cover (plain host loop, os._exit, env scrub of one
key, Workspace-level path refusals, inline size limit) is not repeated here. CUDA faults live in tests/test_gpu.py.
The fault sources are tests/faults/*.py; benchmarks/fault_suite.py runs the same files and times the recovery.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytorch_to_triton.errors import UsageError, WorkerError
from pytorch_to_triton.service import Service
from pytorch_to_triton.worker_client import ENV_ALLOW, ENV_ALLOW_PREFIXES, Limits
from pytorch_to_triton.workspace import MAX_SOURCE_BYTES, STATE_DIR

ROOT = Path(__file__).resolve().parent.parent
FAULTS = Path(__file__).parent / "faults"
KW = {"trials": 1, "only_cases": ["odd_7"], "noncontiguous": False}  # one tiny case: the faults fire at once
HANG_S = 6  # timeout_s for the hang cases
MEMORY = 1 << 30
MAX_PROCS = 32
SECRETS = ("GITHUB_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HF_TOKEN", "AWS_SESSION_TOKEN", "SSH_AUTH_SOCK",
           "DATABASE_URL", "NPM_TOKEN", "LD_PRELOAD_SECRET")


@dataclass
class Box:
    root: Path  # ws/ (the workspace), home/ (HOME), tmp/ (TMPDIR), outside/ (a neighbour of the workspace)
    ws: Path
    svc: Service
    baseline: dict[str, tuple[int, int]]
    out: Path  # ws/outbox: where fixtures write what the tests read (P2T_SANDBOX_WRITABLE; the rest is read-only)


def _tree(root: Path, skip: Path | None = None) -> dict[str, tuple[int, int]]:
    """Every file and directory under root: relative path -> (size, mtime_ns); `skip` is left out."""
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        if skip is not None and (d == skip or skip in d.parents):
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = d / name
            if skip is not None and p == skip:
                continue
            st = p.lstat()
            out[str(p.relative_to(root))] = (st.st_size if not p.is_dir() else 0, st.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("faults")
    ws, home, tmp, outside = (root / n for n in ("ws", "home", "tmp", "outside"))
    for d in (ws, home, tmp, outside):
        d.mkdir()
    for f in FAULTS.glob("*.py"):
        shutil.copy(f, ws / f.name)
    (outside / "evil.py").write_text("def reference(x, y):\n    return x + y\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("TMPDIR", str(tmp))
        (ws / "outbox").mkdir()
        mp.setenv("P2T_SANDBOX_WRITABLE", str(ws / "outbox"))
        mp.setattr(tempfile, "tempdir", None)
        for k in SECRETS:
            mp.setenv(k, f"leak-{k}")
        assert tempfile.gettempdir() == str(tmp)
        baseline = _tree(root, skip=ws)
        svc = Service(ws, limits=Limits(memory_bytes=MEMORY, max_processes=MAX_PROCS))
        try:
            yield Box(root, ws, svc, baseline, ws / "outbox")
        finally:
            svc.close()


def _good(svc: Service) -> None:
    rep = svc.validate(reference="reference.py", candidates=["good.py"], **KW)
    assert rep.ok, rep.summary


def _pid(svc: Service) -> int:
    proc = svc.pool.slots[0].proc
    assert proc is not None and proc.poll() is None
    return proc.pid


def _fault(svc: Service, name: str, **kw):
    rep = svc.validate(reference="reference.py", candidates=[f"{name}.py"], **{**KW, **kw})
    assert not rep.ok, rep.summary
    cand = rep.candidates[0]
    assert cand.findings, cand
    return cand, cand.findings[0]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] not in (b"Z", b"X")


def _live_in_group(pgid: int) -> list[int]:
    out = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    stat = f.read()
                fields = stat[stat.rindex(b")") + 2 :].split()
            except (OSError, ValueError):
                continue
            if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
                out.append(int(entry.name))
    return out


def _gone(pids: list[int], within_s: float = 5.0) -> list[int]:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        left = [p for p in pids if _alive(p)]
        if not left:
            return []
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


# ---- faults -------------------------------------------------------------------------------------------------


def test_host_loop_timeout_kills_the_worker_and_every_helper(box: Box) -> None:
    _good(box.svc)
    pid0 = _pid(box.svc)
    t0 = time.monotonic()
    _, f = _fault(box.svc, "host_loop", timeout_s=HANG_S)
    assert time.monotonic() - t0 < HANG_S + 10
    assert f.check == "timeout" and f"no result after {HANG_S} s" in f.message
    assert re.search(r"\[at host_loop\.py:\d+ in reference\]", f.message), f.message  # the stack dump's user frame
    helpers = [int(p) for p in (box.out / "helpers.pid").read_text().split()]  # written to P2T_SANDBOX_WRITABLE
    assert len(helpers) == 3
    # plain child, start_new_session child, double-forked daemon: all killed with the worker
    assert _gone(helpers) == [], "helper processes outlived the worker"
    assert _gone(_live_in_group(pid0)) == []
    _good(box.svc)
    assert _pid(box.svc) != pid0


def test_kernel_loop_times_out(box: Box) -> None:
    _good(box.svc)
    _, f = _fault(box.svc, "kernel_loop", timeout_s=HANG_S)
    assert f.check == "timeout" and "endless loop" in f.message
    assert "kernel_loop.py:" in f.message, f.message
    assert f.evidence and f.evidence["file"] == "kernel_loop.py"
    _good(box.svc)


def test_kernel_whose_compilation_never_ends_times_out(box: Box) -> None:
    # @triton.heuristics computes BLOCK on the host before compiling; it loops forever
    _good(box.svc)
    _, f = _fault(box.svc, "heuristic_hang", timeout_s=HANG_S)
    assert f.check == "timeout"
    assert "heuristic_hang.py" in f.message and "in _block_size" in f.message, f.message
    _good(box.svc)


def test_host_memory_blowup_is_stopped_by_the_worker_limit(box: Box) -> None:
    _good(box.svc)
    pid0 = _pid(box.svc)
    _, f = _fault(box.svc, "memory_blowup", timeout_s=60)
    # The RSS watch kills the worker at the limit; RLIMIT_AS (limit + 4 GiB) may refuse an allocation first.
    if f.check == "memory_limit":
        assert f"more than {MEMORY >> 20} MiB of host memory" in f.message
        assert _gone(_live_in_group(pid0)) == []
    else:
        assert f.check == "exception" and "allocate" in f.message, f.message
    _good(box.svc)


def test_one_impossible_allocation_is_an_exception_and_the_worker_stays(box: Box) -> None:
    _good(box.svc)
    pid0 = _pid(box.svc)
    _, f = _fault(box.svc, "huge_alloc")
    assert f.check == "exception" and "can't allocate memory" in f.message
    assert f.evidence["line"] == 7 and f.evidence["file"].endswith("huge_alloc.py")
    _good(box.svc)
    assert _pid(box.svc) == pid0


def test_segfault_is_reported_with_the_user_line_and_survived(box: Box) -> None:
    _good(box.svc)
    pid0 = _pid(box.svc)
    cand, f = _fault(box.svc, "segfault")
    assert f.check == "crashed" and "SIGSEGV" in f.message
    assert "[at segfault.py:7 in reference]" in f.message  # from faulthandler's dump
    assert cand.error["line"] == 7 and "Segmentation fault" in cand.error["stderr_tail"]
    _good(box.svc)
    assert _pid(box.svc) != pid0


def test_fork_bomb_is_stopped_at_the_process_limit(box: Box) -> None:
    _good(box.svc)
    pid0 = _pid(box.svc)
    t0 = time.monotonic()
    _, f = _fault(box.svc, "fork_bomb", timeout_s=60)
    assert f.check == "process_limit" and f"more than {MAX_PROCS} processes" in f.message
    assert time.monotonic() - t0 < 30
    assert _gone(_live_in_group(pid0)) == []
    _good(box.svc)


def test_output_floods_are_capped_and_never_reach_our_stdout(box: Box, capfd: pytest.CaptureFixture) -> None:
    _good(box.svc)
    capfd.readouterr()
    rep = box.svc.validate(reference="reference.py", candidates=["flood.py"], **KW)
    assert rep.ok, rep.summary  # ~6 MiB per call on stdout/stderr, Python and raw fds, 3 calls: still a pass
    out = rep.candidates[0].worker_output
    m = re.match(r"\[\.\.\. (\d+) earlier bytes of worker output truncated \.\.\.\]\n", out)
    assert m and int(m.group(1)) > 10_000_000, out[:200]
    assert len(out) <= 2200
    assert "raw fd 2" in out  # the kept tail is the end of the flood, not a few stray bytes
    captured = capfd.readouterr()
    assert captured.out == "" and "flood" not in captured.err and "raw fd" not in captured.err
    _good(box.svc)


def test_recursion_error_is_reported_and_the_worker_stays(box: Box) -> None:
    _good(box.svc)
    pid0 = _pid(box.svc)
    _, f = _fault(box.svc, "recursion")
    assert f.check == "exception" and f.message.startswith("RecursionError")
    assert f.evidence["line"] in (4, 5) and f.evidence["file"].endswith("recursion.py")  # def or call of _depth
    _good(box.svc)
    assert _pid(box.svc) == pid0


def test_c_stack_overflow_crashes_the_worker_and_is_survived(box: Box) -> None:
    _good(box.svc)
    _, f = _fault(box.svc, "stack_overflow", timeout_s=60)
    # Python >= 3.12 guards C recursion too and raises RecursionError; older versions segfault; an unlimited
    # stack grows into the memory limit.
    assert f.check in ("crashed", "memory_limit", "exception"), f.message
    if f.check == "exception":
        assert "RecursionError" in f.message and sys.version_info >= (3, 12), f.message
    if f.check == "crashed":
        assert "SIGSEGV" in f.message and "[at stack_overflow.py:12 in reference]" in f.message
    _good(box.svc)


# ---- concurrency and cancellation --------------------------------------------------------------------------

_LOGGED = '''
import os as _os
import time as _time

from {base} import reference as _inner

_LOG = _os.path.join(_os.environ.get("P2T_SANDBOX_WRITABLE", ".").split(_os.pathsep)[0], "intervals.log")

def reference(x, y):
    with open(_LOG, "a") as f:
        f.write(f"{name} start {{_time.monotonic()}}\\n")
    _time.sleep(0.1)
    out = _inner(x, y)
    with open(_LOG, "a") as f:
        f.write(f"{name} end {{_time.monotonic()}}\\n")
    return out
'''


def test_two_calls_at_once_never_interleave_on_one_worker(box: Box) -> None:
    (box.ws / "conc_a.py").write_text(_LOGGED.format(base="good", name="A"))
    (box.ws / "wrong.py").write_text((box.ws / "good.py").read_text().replace("x + y", "x - y"))
    (box.ws / "conc_b.py").write_text(_LOGGED.format(base="wrong", name="B"))
    (box.out / "intervals.log").unlink(missing_ok=True)
    reports: dict[str, object] = {}

    def run(name: str) -> None:
        reports[name] = box.svc.validate(reference="reference.py", candidates=[f"conc_{name}.py"], trials=2)

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    a, b = reports["a"], reports["b"]
    assert a.ok and a.candidates[0].candidate == "conc_a.py", a.summary
    assert not b.ok and b.candidates[0].candidate == "conc_b.py" and b.candidates[0].findings[0].check == "mismatch"
    events = [line.split() for line in (box.out / "intervals.log").read_text().splitlines()]
    events.sort(key=lambda e: float(e[2]))
    assert len(events) >= 8
    # every call ran to its end before any other started, and one candidate's calls form one block
    for i in range(0, len(events), 2):
        assert events[i][1] == "start" and events[i + 1][1] == "end" and events[i][0] == events[i + 1][0], events
    names = [e[0] for e in events[::2]]
    assert names == sorted(names) or names == sorted(names, reverse=True), names


def test_cancel_stops_the_run_and_frees_the_worker(box: Box) -> None:
    _good(box.svc)
    pid0 = _pid(box.svc)
    slot = box.svc.pool.slots[0]
    cancel_a, cancel_b, running = threading.Event(), threading.Event(), threading.Event()
    errors: dict[str, BaseException] = {}
    done_at: dict[str, float] = {}

    def run(name: str, cand: str, cancel: threading.Event) -> None:
        try:
            box.svc.validate(reference="reference.py", candidates=[cand], timeout_s=300, cancel=cancel,
                             on_event=lambda msg, p, t: running.set() if "cancel_me" in msg else None, **KW)
        except BaseException as e:  # noqa: BLE001 - inspected below
            errors[name] = e
        done_at[name] = time.monotonic()

    a = threading.Thread(target=run, args=("a", "cancel_me.py", cancel_a))
    a.start()
    assert running.wait(60), "the long call never started"
    b = threading.Thread(target=run, args=("b", "good.py", cancel_b))  # queued behind a
    b.start()
    time.sleep(0.5)
    t_b = time.monotonic()
    cancel_b.set()
    b.join(timeout=10)
    assert isinstance(errors.get("b"), WorkerError) and errors["b"].kind == "cancelled"
    assert "waiting for a free worker" in str(errors["b"]) and done_at["b"] - t_b < 2
    assert a.is_alive() and _pid(box.svc) == pid0  # cancelling the queued call left the running one alone
    t_a = time.monotonic()
    cancel_a.set()
    a.join(timeout=20)
    assert isinstance(errors.get("a"), WorkerError) and errors["a"].kind == "cancelled"
    assert "the worker was stopped" in str(errors["a"]) and done_at["a"] - t_a < 5
    assert not slot.lock.locked() and not slot.alive()
    assert _gone(_live_in_group(pid0)) == []
    _good(box.svc)


# ---- bad input ----------------------------------------------------------------------------------------------


def _setup_bad_inputs(box: Box) -> None:
    ws = box.ws
    if (ws / "latin.py").exists():
        return
    (ws / "latin.py").write_bytes(b"# caf\xe9\nx = 1\n")
    (ws / "big.py").write_text("#" * MAX_SOURCE_BYTES + "\n")
    (ws / "notes.txt").write_text("not python\n")
    os.symlink(box.root / "outside" / "evil.py", ws / "link.py")
    os.symlink(box.root / "outside", ws / "linkdir")


BAD_INPUTS = {
    # name: (validate kwargs, message regex, reaches the worker)
    "missing_reference": ({"reference": "nope.py", "candidates": ["good.py"]},
                          r"reference 'nope\.py' not found \(looked at .*nope\.py\)", False),
    "missing_candidate": ({"candidates": ["nope.py"]}, r"candidate 'nope\.py' not found", False),
    "dotdot_candidate": ({"candidates": ["../outside/evil.py"]},
                         r"candidate '\.\./outside/evil\.py' resolves to .*outside.*, outside the workspace", False),
    "symlink_file_out": ({"candidates": ["link.py"]}, r"candidate 'link\.py' resolves to .*outside/evil\.py.*outside "
                         r"the workspace", False),
    "symlink_dir_out": ({"candidates": ["linkdir/evil.py"]}, r"outside the workspace .* --workspace", False),
    "not_python": ({"reference": "notes.txt", "candidates": ["good.py"]}, r"notes\.txt is not a \.py file", False),
    "non_utf8_file": ({"candidates": ["latin.py"]}, r"latin\.py is not valid UTF-8 \(byte 5\); save it as UTF-8",
                      False),
    "non_utf8_inline": ({"candidate_code": "x = '\udcff'\n"},
                        r"candidate_code cannot be saved as UTF-8: surrogates not allowed .*'\\udcff'", False),
    "source_over_1mib": ({"candidates": ["big.py"]}, rf"big\.py is {MAX_SOURCE_BYTES + 1} bytes; the limit is "
                         rf"{MAX_SOURCE_BYTES} \(1 MiB\)", False),
    "unknown_case_dtype": ({"candidates": ["good.py"], "cases": [{"name": "c", "shape": [4], "dtype": "float17"}]},
                           r"unknown dtype 'float17'; use one of float32", False),
    "unknown_tolerance_dtype": ({"candidates": ["good.py"], "tolerances": {"fp12": {"rtol": 0, "atol": 0}}},
                                r"unknown dtype 'fp12'", False),
    "negative_shape": ({"candidates": ["good.py"], "cases": [{"name": "c", "shape": [-1]}]},
                       r"must be a list of non-negative integers", False),
    "wrong_reference_entry": ({"candidates": ["good.py"], "reference_entry": "nope"},
                              r"reference has no function 'nope'; it defines \['make_inputs', 'reference'\]", True),
    "signature_mismatch": ({"candidates": ["sig_mismatch.py"]},
                           r"signatures differ: reference\(x, y\) vs candidate\(x\); the candidate must take the "
                           r"same positional arguments", True),
    "reference_rejects_inputs": ({"reference": "rejecting_reference.py", "candidates": ["good.py"]},
                                 r"the reference raised on case mismatched \(float32\): RuntimeError: .*size of tensor "
                                 r".*Fix make_inputs or the reference", True),
    "case_beyond_memory": ({"candidates": ["good.py"], "cases": [{"name": "huge", "shape": [1 << 40]}],
                            "only_cases": ["huge"]},
                           r"case huge \[1099511627776\] needs about [\d.]+ GiB .* shrink the case", True),
    "case_beyond_worker_limit": ({"candidates": ["good.py"], "cases": [{"name": "big", "shape": [60_000_000]}],
                                  "only_cases": ["big"]},
                                 r"case big \[60000000\] needs about [\d.]+ GiB .* of host memory under the worker's "
                                 r"memory limit are free", True),
}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_input_is_refused_clearly_and_writes_nothing(box: Box, name: str) -> None:
    _setup_bad_inputs(box)
    kwargs, pattern, reaches_worker = BAD_INPUTS[name]
    kwargs = {"reference": "reference.py", **kwargs, "trials": 1}
    if reaches_worker:
        _good(box.svc)
        pid0 = _pid(box.svc)
    before = _tree(box.root, skip=box.ws / STATE_DIR)
    with pytest.raises(UsageError) as exc:
        box.svc.validate(**kwargs)
    assert re.search(pattern, str(exc.value)), str(exc.value)
    assert _tree(box.root, skip=box.ws / STATE_DIR) == before, "a refused call wrote files"
    if reaches_worker:
        assert _pid(box.svc) == pid0  # refused inside the worker, which stays up for the next call


# ---- confinement --------------------------------------------------------------------------------------------


def test_worker_env_cwd_tempdir_and_limits(box: Box) -> None:
    rep = box.svc.validate(reference="reference.py", candidates=["confine.py"], **KW)
    assert rep.ok, rep.summary
    facts = json.loads((box.out / "confine.json").read_text())
    state = box.ws / STATE_DIR
    env = facts["env"]
    assert facts["cwd"] == str(box.ws)
    # the sandbox's scratch directory, emptied after every call: <state>/tmp/<slot>/w<worker pid>
    assert state / "tmp" in Path(facts["tempdir"]).parents and env["TMPDIR"] == facts["tempdir"]
    assert Path(env["TRITON_CACHE_DIR"]).parent == state
    assert facts["sid"] == facts["pgid"] == facts["pid"]  # own session: the group kill reaches everything
    assert facts["rlimit_core"] == [0, 0]
    if not Path("/dev/nvidiactl").exists():
        assert facts["rlimit_as"] == [MEMORY + (4 << 30)] * 2
    leaked = [k for k in SECRETS if k in env]
    assert not leaked, leaked
    ours = {"PYTHONPATH", "TMPDIR", "TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "PYTHONUNBUFFERED",
            "PYTHONDONTWRITEBYTECODE", "P2T_WORKER_MEMORY_BYTES", "TRITON_INTERPRET", "CUDA_VISIBLE_DEVICES",
            "P2T_SANDBOX", "P2T_SANDBOX_WRITABLE", "TORCHINDUCTOR_COMPILE_THREADS", "TEMP", "TMP",
            # h28: the server turns Inductor's FX graph and AOTAutograd caches on (worker_client._start_process)
            "TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_AUTOGRAD_CACHE", "P2T_WORKER_GPU"}
    extra = [k for k in env if k not in ENV_ALLOW and not k.startswith(ENV_ALLOW_PREFIXES) and k not in ours]
    assert not extra, f"variables outside the allowlist reached the worker: {extra}"
    # Known limit (docs/FAULTS.md): user code runs as the server's user and can read /proc/<server>/environ.
    print("parent environ readable from the worker:", facts["parent_environ_readable"])


# ---- durability ---------------------------------------------------------------------------------------------

_SLOW_WRITER = r'''
import os, sys, time
sys.path.insert(0, sys.argv[2])
from pytorch_to_triton import workspace

real_fdopen = os.fdopen

class HalfThenHang:
    def __init__(self, f):
        self.f = f
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        return self.f.__exit__(*exc)
    def write(self, data):
        self.f.write(data[: len(data) // 2])
        self.f.flush()
        print("HALF", flush=True)
        time.sleep(600)
    def __getattr__(self, name):
        return getattr(self.f, name)

workspace.os.fdopen = lambda fd, mode: HalfThenHang(real_fdopen(fd, mode))
workspace.atomic_write(__import__("pathlib").Path(sys.argv[1]), b"NEW" * 2_000_000)
'''


def test_writer_killed_mid_write_leaves_the_previous_copy(tmp_path: Path) -> None:
    from pytorch_to_triton.workspace import atomic_write

    target = tmp_path / "results" / "r.json"
    atomic_write(target, json.dumps({"version": "good"}))
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_WRITER, str(target), str(ROOT / "server")],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "HALF"  # half the new bytes are on disk, in the temp file
        partial = [p for p in target.parent.iterdir() if p != target]
        assert len(partial) == 1 and partial[0].stat().st_size == 3_000_000
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert json.loads(target.read_text()) == {"version": "good"}
    atomic_write(target, json.dumps({"version": "next"}))  # the next write still works beside the leftover
    assert json.loads(target.read_text()) == {"version": "next"}


_LOOP_WRITER = r'''
import sys
sys.path.insert(0, sys.argv[2])
from pytorch_to_triton import journal
i = 0
print("GO", flush=True)
while True:
    i += 1
    journal.append_entry(sys.argv[1], "t", {"tool": "run_validation", "stage": f"s{i}.py", "pad": "p" * 200_000})
'''


def test_journal_writers_killed_at_random_points_leave_whole_journals(tmp_path: Path) -> None:
    from pytorch_to_triton import journal

    path = journal.journal_dir(tmp_path) / "t.jsonl"
    rng = random.Random(1234)
    count = 0
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, "-c", _LOOP_WRITER, str(tmp_path), str(ROOT / "server")],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "GO"
        time.sleep(rng.uniform(0.05, 0.6))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        lines = path.read_text().splitlines() if path.exists() else []
        entries = [json.loads(x) for x in lines]  # every line whole: no torn write
        assert len(entries) >= count  # never lost what a previous writer committed
        assert all(e["pad"] == "p" * 200_000 for e in entries)
        count = len(entries)
    assert count > 0


# ---- last: the whole module wrote nothing outside the workspace --------------------------------------------


def test_nothing_was_written_outside_the_workspace(box: Box) -> None:
    after = _tree(box.root, skip=box.ws)
    new = sorted(set(after) - set(box.baseline))
    changed = sorted(k for k in set(after) & set(box.baseline) if after[k] != box.baseline[k] and not
                     (box.root / k).is_dir())
    assert not new and not changed, f"written outside the workspace: new {new}, changed {changed}"
