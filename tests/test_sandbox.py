"""The worker sandbox (worker/confine/sandbox.py, sandbox_host.py) against the hostile corpus (tests/hostile/*.py), through
the real CLI (`python -m pytorch_to_triton validate`) and the real MCP client over stdio; the switch that turns it
off, and the honest report where the kernel has no Landlock (a real seccomp filter makes the syscalls fail).

Every hostile candidate must fail with an error naming what was refused (or, for the process it leaves behind, be
noted and cleaned up), the next correct call must pass, and the effect is checked from outside: the files are
unchanged, nothing connected, no process is left.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from conftest import child_env

from pytorch_to_triton.worker.confine.sandbox import abi_version

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = Path(__file__).parent / "hostile"
SANDBOX_FIXTURES = Path(__file__).parent / "sandbox_fixtures"
FAULTS = Path(__file__).parent / "faults"
FAKE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\np2t-fake-key-material-0123456789\n-----END OPENSSH PRIVATE KEY-----\n"
BASHRC = "# the user's own bashrc\n"
JOURNAL_LINE = '{"tool": "run_validation", "stage": "earlier.py", "ok": false}\n'
FILE_BYTES = 8 << 20  # P2T_SANDBOX_FILE_BYTES for the run: fill_disk.py stops at 8 MiB
KW = ["--trials", "1", "--only-cases", "odd_7"]
# hostile file -> words the failing candidate's error must contain (what was refused)
REFUSED = {
    "rewrite_reference": "Permission denied", "rewrite_sidecar": "Permission denied",
    "rewrite_journal": "Permission denied", "write_bashrc": "Permission denied", "read_ssh_key": "Permission denied",
    "tcp_connect": "Permission denied", "fill_disk": "File too large", "spawn_shell": "Permission denied",
    "patch_reference": "__code__/defaults/closure",  # in memory: refseal restores it before any case runs
    "read_server_environ": "Permission denied",
}
TOKEN = "p2t-fake-token-4f1c9a"  # in the server's environment only
CORPUS = [*REFUSED, "fork_sleeper"]

pytestmark = pytest.mark.skipif(abi_version()[0] < 4, reason="needs Landlock ABI >= 4 (TCP rules) in this kernel")


class Listener:
    """A TCP server on 127.0.0.1 that records whether anyone connected."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                self.received.append(conn.recv(1024) or b"<connected>")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


@dataclass
class Box:
    root: Path
    ws: Path
    home: Path
    env: dict[str, str]
    listener: Listener
    reference: bytes = b""
    journal: Path = field(default_factory=Path)


def _box(tmp: Path) -> Box:
    ws, home = tmp / "ws", tmp / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(FAKE_KEY)
    (home / ".bashrc").write_text(BASHRC)
    ws.mkdir()
    for f in [FAULTS / "reference.py", FAULTS / "good.py", *HOSTILE.glob("*.py")]:
        shutil.copy(f, ws / f.name)
    journal = ws / ".pytorch-to-triton" / "journal" / "reference.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_text(JOURNAL_LINE)
    listener = Listener()
    (ws / "port.txt").write_text(str(listener.port))
    env = child_env(HOME=str(home), P2T_SPARE_WORKER="0", GITHUB_TOKEN=TOKEN, P2T_SANDBOX_FILE_BYTES=str(FILE_BYTES))
    return Box(tmp, ws, home, env, listener, (ws / "reference.py").read_bytes(), journal)


_STARTS: dict[str, str] = {}  # PYTHONPATH -> '' when the tool imports in a child process, else why not


def _tool_starts(env: dict[str, str]) -> None:
    """Fail, naming the reason, when a child process with `env` cannot import the tool (a dependency missing from
    the PYTHONPATH it was given, ...): that is a broken test environment, not a containment failure."""
    key = env.get("PYTHONPATH", "")
    if key not in _STARTS:
        r = subprocess.run([sys.executable, "-c", "import pydantic, mcp, pytorch_to_triton.cli"], env=env,
                           capture_output=True, text=True, timeout=120)
        _STARTS[key] = "" if r.returncode == 0 else (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]
    if _STARTS[key]:
        pytest.fail(f"could not start the tool (not a containment failure): {_STARTS[key]} "
                    f"[PYTHONPATH={key}, {sys.executable}]", pytrace=False)


@pytest.fixture
def box(tmp_path: Path):
    b = _box(tmp_path)
    try:
        _tool_starts(b.env)
        yield b
    finally:
        b.listener.close()


def test_a_tool_that_cannot_start_fails_with_that_reason(tmp_path: Path) -> None:
    """A child process whose PYTHONPATH lacks a dependency (on the GPU machine the tests once dropped the carried
    .site folder: `import pydantic` failed) fails the test as 'could not start the tool', with the import error."""
    shadow = tmp_path / "site" / "pydantic"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('pydantic is not on this PYTHONPATH')\n")
    env = child_env(PYTHONPATH=os.pathsep.join([str(ROOT / "server"), str(tmp_path / "site")]))
    with pytest.raises(pytest.fail.Exception, match="could not start the tool .*pydantic is not on this PYTHONPATH"):
        _tool_starts(env)
    kept = child_env()["PYTHONPATH"].split(os.pathsep)
    assert kept[0] == str(ROOT / "server")  # the caller's PYTHONPATH follows, never dropped
    assert all(p in kept for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)


def _cli(box: Box, *args: str, env: dict[str, str] | None = None, timeout: float = 280) -> dict:
    out = subprocess.run([sys.executable, "-m", "pytorch_to_triton", "validate", "--json", "-q", *args, *KW],
                         cwd=box.ws, env=env or box.env, capture_output=True, text=True, timeout=timeout)
    for secret in (FAKE_KEY.splitlines()[1], TOKEN):  # neither the key nor the server's token reaches any output
        assert secret not in out.stdout + out.stderr
    try:
        return json.loads(out.stdout)
    except ValueError:
        pytest.fail(f"could not start the tool (not a containment failure): `validate --json` exited {out.returncode} "
                    f"without a report; its stderr ends:\n{out.stderr[-3000:]}", pytrace=False)


def _sleepers() -> list[int]:
    """Live processes carrying fork_sleeper.py's marker."""
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        if b"p2t-hostile-sleeper" in cmd and stat[stat.rindex(b")") + 2:].split()[0] not in (b"Z", b"X"):
            out.append(int(entry.name))
    return out


def _error_text(cand: dict) -> str:
    return json.dumps([cand.get("error"), cand.get("findings")])


def _check_candidate(name: str, cand: dict) -> None:
    """One hostile candidate's report: refused with a clear error, or (the sleeper) passed and cleaned up."""
    if name == "fork_sleeper":
        assert cand["ok"], _error_text(cand)
        assert any("killed them" in n for n in cand.get("notes") or []), cand.get("notes")
        return
    assert not cand["ok"], f"{name} passed: the attempt was not refused"
    assert REFUSED[name] in _error_text(cand), f"{name}: {_error_text(cand)[:1500]}"
    if name != "patch_reference":  # the report says it was the sandbox (errors_fmt + sandbox.refusal_note)
        assert "[sandbox: files are limited to 8 MiB]" in _error_text(cand) if name == "fill_disk" else \
            "[refused by the sandbox" in _error_text(cand), _error_text(cand)[:1500]


def _check_outside(box: Box) -> None:
    """Nothing the corpus tried left a trace outside the worker."""
    assert (box.ws / "reference.py").read_bytes() == box.reference
    assert not (box.ws / "reference.p2t.toml").exists()
    assert "forged" not in box.journal.read_text()
    assert not (box.ws / ".pytorch-to-triton" / "journal" / "forged.jsonl").exists()
    assert (box.home / ".bashrc").read_text() == BASHRC
    assert not (box.home / "pwned").exists()
    assert box.listener.received == []
    assert _sleepers() == []
    left = [p for p in (box.ws / ".pytorch-to-triton" / "tmp").rglob("*") if p.is_file()]
    assert not left, f"the scratch kept {left}"


def test_hostile_corpus_is_contained_under_the_cli(box: Box) -> None:
    """All of them, each followed by a correct candidate, in one `validate` run (one warm worker, call after call)."""
    files = [f for name in CORPUS for f in (f"{name}.py", "good.py")]
    rep = _cli(box, "reference.py", *files)
    cands = rep["candidates"]
    assert [c["candidate"] for c in cands] == files
    for name, cand, after in zip(CORPUS, cands[0::2], cands[1::2]):
        _check_candidate(name, cand)
        assert after["ok"], f"the correct call after {name} failed: {_error_text(after)[:1500]}"
        assert not any("killed them" in n for n in after.get("notes") or []), f"after {name}: {after['notes']}"
    assert rep["runtime"]["sandbox"].startswith("sandbox: landlock v"), rep["runtime"]
    assert "tcp denied" in rep["runtime"]["sandbox"]
    _check_outside(box)


# Long end-to-end run (over a minute on 2 cores): the corpus command; the hostile corpus again through the MCP client;
# the default command runs it through the CLI (real Landlock) and the MCP client over stdio in tests/test_mcp.py.
@pytest.mark.corpus
def test_hostile_corpus_is_contained_under_the_mcp_client(box: Box) -> None:
    """The same corpus through `pytorch-to-triton serve` over stdio, one tool call per candidate; the sleeper is
    gone as soon as its call has answered (the server stays up, so only the sandbox can have killed it)."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "pytorch_to_triton", "serve", "--workspace",
                                                                 str(box.ws)], env=box.env, cwd=str(box.ws))

    async def call(client: Client, cand: str) -> dict:
        res = await client.call_tool("run_validation", {"reference": "reference.py", "candidates": [cand],
                                                        "trials": 1, "only_cases": ["odd_7"]})
        assert not res.is_error, res.content
        assert FAKE_KEY.splitlines()[1] not in json.dumps(res.structured_content)
        assert TOKEN not in json.dumps(res.structured_content)
        return res.structured_content

    async def go() -> None:
        async with Client(params, read_timeout_seconds=600) as client:
            for name in CORPUS:
                sc = await call(client, f"{name}.py")
                _check_candidate(name, sc["candidates"][0])
                assert sc["runtime"]["sandbox"].startswith("sandbox: landlock v"), sc["runtime"]
                if name == "fork_sleeper":
                    assert _sleepers() == [], "the process the call left is still running"
                good = await call(client, "good.py")
                assert good["ok"], f"the correct call after {name} failed"
                assert not any("killed them" in n for n in good["candidates"][0].get("notes") or [])

    anyio.run(go)
    _check_outside(box)


def test_no_sandbox_lets_the_attempt_through(box: Box) -> None:
    """--no-sandbox is what it says: the corpus is live (the bashrc write succeeds) and the runtime says 'off'."""
    rep = _cli(box, "--no-sandbox", "reference.py", "write_bashrc.py")
    assert rep["candidates"][0]["ok"], _error_text(rep["candidates"][0])
    assert rep["runtime"]["sandbox"].startswith("sandbox: off"), rep["runtime"]
    assert "p2t-hostile-was-here" in (box.home / ".bashrc").read_text()


def test_kernel_without_landlock_is_reported_and_the_call_runs(box: Box) -> None:
    """A seccomp filter answers ENOSYS to the Landlock syscalls (as a container's profile does): the worker runs
    unconfined, the correct candidate passes, and every result says the sandbox is not enforced."""
    env = {**box.env, "P2T_SANDBOX_TEST_NO_LANDLOCK": "1"}
    rep = _cli(box, "reference.py", "good.py", env=env)
    assert rep["candidates"][0]["ok"], _error_text(rep["candidates"][0])
    sandbox = rep["runtime"]["sandbox"]
    assert sandbox.startswith("sandbox: NOT ENFORCED") and "ENOSYS" in sandbox, sandbox
    assert "files <= 8 MiB" in sandbox  # the limits still apply


def _relocated_gcc(tmp: Path) -> Path | None:
    """A copy of this machine's gcc driver in a directory of its own (tmp/cc/bin/gcc), its installation linked where
    gcc looks for it (<prefix>/lib/gcc/<target>/<version>, and libexec/ where there is one): like the GPU image's
    CC=/opt/gcc/bin/gcc, a compiler neither on PATH nor under /usr. None where gcc is laid out otherwise."""
    gcc = shutil.which("gcc")
    if gcc is None:
        return None
    real = Path(os.path.realpath(gcc))
    dirs = subprocess.run([gcc, "-print-search-dirs"], capture_output=True, text=True, timeout=60).stdout
    install = next((Path(os.path.realpath(line.split(":", 1)[1].strip())) for line in dirs.splitlines()
                    if line.startswith("install:")), None)
    prefix = real.parent.parent
    if install is None or not install.is_relative_to(prefix / "lib"):
        return None
    root = tmp / "cc"
    (root / "bin").mkdir(parents=True)
    shutil.copy2(real, root / "bin" / "gcc")
    rel = install.relative_to(prefix)
    for src, dst in ((install, root / rel), (prefix / "libexec" / rel.relative_to("lib"), root / "libexec" /
                                             rel.relative_to("lib"))):
        if src.is_dir():
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.symlink_to(src)
    cc1 = subprocess.run([root / "bin" / "gcc", "-print-prog-name=cc1"], capture_output=True, text=True).stdout.strip()
    return root / "bin" / "gcc" if os.path.isfile(cc1) else None


def test_exec_follows_the_compiler_triton_resolves(box: Box) -> None:
    """CC names a compiler outside PATH and /usr (on the GPU image CC=/opt/gcc/bin/gcc, which the ruleset refused when
    Triton 3.6 built its first launcher): the confined worker builds a C module with Triton's own build function
    through it and what it runs (cc1, as, collect2, ld), and the gcc on PATH, not Triton's compiler now, is refused."""
    cc = _relocated_gcc(box.root)
    if cc is None:
        pytest.skip("this machine's gcc is not laid out as <prefix>/bin/gcc + <prefix>/lib/gcc/<target>/<version>")
    for f in SANDBOX_FIXTURES.glob("*.py"):
        shutil.copy(f, box.ws / f.name)
    rep = _cli(box, "reference.py", "launcher_build.py", "other_compiler.py", "good.py", env={**box.env, "CC": str(cc)})
    built, other, good = rep["candidates"]
    assert built["ok"], _error_text(built)[:2000]
    assert not other["ok"], "the gcc on PATH ran although Triton's compiler is another one"
    assert "Permission denied" in _error_text(other) and "[refused by the sandbox" in _error_text(other), \
        _error_text(other)[:1500]
    assert good["ok"], _error_text(good)[:1500]
    assert f"C compiler {os.path.realpath(cc)} (+" in rep["runtime"]["sandbox"], rep["runtime"]["sandbox"]


def test_a_compiler_named_by_a_script_is_replaced_and_the_launcher_builds(box: Box) -> None:
    """CC names a shell wrapper (the GPU image's CC=/opt/gcc/bin/gcc is one: a confined Triton 3.6 launch was refused
    it on the H100, 2026-12-06): no shell may run, so the worker names the gcc on PATH in CC before confinement and
    Triton's own build function compiles through it."""
    wrapper = box.root / "wrapped" / "bin" / "gcc"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text('#!/bin/sh\nexec gcc "$@"\n')
    wrapper.chmod(0o755)
    for f in SANDBOX_FIXTURES.glob("*.py"):
        shutil.copy(f, box.ws / f.name)
    rep = _cli(box, "reference.py", "launcher_build.py", "good.py", env={**box.env, "CC": str(wrapper)})
    built, good = rep["candidates"]
    assert built["ok"] and good["ok"], (_error_text(built) + _error_text(good))[:2000]
    summary = rep["runtime"]["sandbox"]
    assert f"CC {wrapper} is a script" in summary and str(wrapper) + " (+" not in summary, summary


def test_policy_grants_no_home_and_writes_only_scratch_and_caches(tmp_path: Path) -> None:
    """The ruleset itself (no process is confined here): home and / are never granted, writes go to three places."""
    from pytorch_to_triton.worker.confine import sandbox

    ws, scratch, caches = tmp_path / "ws", tmp_path / "s", [str(tmp_path / "triton"), str(tmp_path / "inductor")]
    ws.mkdir()
    pol = sandbox.build_policy(str(ws), str(scratch), caches)
    home = os.path.realpath(os.path.expanduser("~"))
    assert home not in pol.rules and "/" not in pol.rules
    writable = sorted(p for p, r in pol.rules.items() if r & sandbox.WRITE_FILE and not p.startswith("/dev/"))
    assert writable == sorted(os.path.realpath(p) for p in [str(scratch), *caches])
    shells = [os.path.realpath(p) for p in ("/bin/sh", "/bin/bash") if os.path.exists(p)]
    assert not any(pol.rules.get(s, 0) & sandbox.EXECUTE for s in shells)
    assert pol.rules[os.path.realpath(ws)] == sandbox.READ


def test_a_pinned_libcuda_path_spares_triton_the_ldconfig_a_confined_worker_may_not_run(tmp_path: Path) -> None:
    """On the H200 a confined worker was refused /sbin/ldconfig (a shell script there). gpu_first pins the directory
    Triton found libcuda in as TRITON_LIBCUDA_PATH before confinement; Triton's own libcuda_dirs() then answers from
    it and runs nothing (here any subprocess would fail), in this process and in any child that inherits the env."""
    code = (
        "import os, subprocess\n"
        "from pytorch_to_triton.worker.device import gpu_first\n"
        "os.environ['TRITON_LIBCUDA_PATH'] = '/opt/fake/libcuda'\n"
        "gpu_first.pin_libcuda_dirs()  # already pinned: left as it is\n"
        "def refuse(*a, **k):\n"
        "    raise PermissionError('no program may run once confined')\n"
        "subprocess.check_output = refuse\n"
        "try:\n"
        "    from triton.backends.nvidia.driver import libcuda_dirs\n"
        "except ImportError:\n"
        "    print('no nvidia backend'); raise SystemExit(0)\n"
        "print(libcuda_dirs.__wrapped__(), os.environ['TRITON_LIBCUDA_PATH'])\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=child_env())
    assert r.returncode == 0, r.stderr[-1500:]
    assert "no nvidia backend" in r.stdout or "['/opt/fake/libcuda'] /opt/fake/libcuda" in r.stdout, r.stdout


def test_every_result_says_what_confined_the_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """runtime.sandbox in the result of every tool that runs user code (validation, benchmark or its no-GPU estimate,
    audit's compiled part and probes, suite), and an audit that ran none of the file's code says so."""
    from pytorch_to_triton import peaks_store
    from pytorch_to_triton.service import NO_CODE_RAN, Service
    from pytorch_to_triton.suite import run_suite
    from pytorch_to_triton.worker_client import Limits

    monkeypatch.setenv("P2T_SPARE_WORKER", "0")
    monkeypatch.setenv("P2T_SANDBOX", "1")  # confined on a GPU too, whatever sandbox_host.GPU_CONFINED_BY_DEFAULT says
    ws = tmp_path / "ws"
    (ws / "p").mkdir(parents=True)
    for name in ("reference.py", "good.py"):
        shutil.copy(FAULTS / name, ws / "p" / name)
    svc = Service(ws, limits=Limits(sandbox=True))
    try:
        bench = svc.benchmark(reference="p/reference.py", candidates=["p/good.py"], repeats=1)
        got = {
            "validate": svc.validate(reference="p/reference.py", candidates=["p/good.py"], trials=1,
                                     only_cases=["odd_7"]).runtime,
            "benchmark": bench.runtime,
            "audit": svc.audit(path="p/good.py", reference="p/reference.py").runtime,
            "suite": run_suite(svc, directory=".", trials=1, benchmark=False, kernelbench=False).runtime,
        }
        static = svc.audit(path="p/good.py", compile=False, probe=False).runtime
    finally:
        svc.close()
    for tool, runtime in got.items():
        assert str(runtime.get("sandbox", "")).startswith("sandbox: landlock v"), (tool, runtime)
    assert static == {"sandbox": NO_CODE_RAN}
    state = ws / ".pytorch-to-triton"
    if bench.timings:  # a GPU timed it in the confined worker: the peaks it measured were written by the host
        assert bench.ok, bench.summary
        assert peaks_store.known(state) and not list(state.glob("peaks.*.tmp"))


def test_a_confined_worker_may_run_compute_sanitizer_through_the_toolkits_link(tmp_path: Path) -> None:
    """On the H100 (2026-12-06) every audit's sanitizer child failed with EACCES: the toolkit's bin/compute-sanitizer
    leads into its compute-sanitizer/ directory, which the ruleset did not let run. A toolkit laid out the same way
    (the program is a copy of `true`): find() names the program itself, and a confined process runs it both ways."""
    true = shutil.which("true")
    assert true, "no `true` on PATH"
    cuda = tmp_path / "cuda"
    (cuda / "compute-sanitizer").mkdir(parents=True)
    (cuda / "bin").mkdir()
    shutil.copy2(os.path.realpath(true), cuda / "compute-sanitizer" / "compute-sanitizer")
    (cuda / "bin" / "compute-sanitizer").symlink_to("../compute-sanitizer/compute-sanitizer")
    ws = tmp_path / "ws"
    ws.mkdir()
    code = textwrap.dedent(f"""
        import os, subprocess, sys
        from pytorch_to_triton.worker.confine import sandbox
        from pytorch_to_triton.worker.probe import sanitizer
        exe = sanitizer.find()
        state = sandbox.confine({str(ws)!r})
        assert state.enabled, state.summary
        for path in (exe, {str(cuda / "bin" / "compute-sanitizer")!r}):
            print(path, subprocess.run([path]).returncode)
        try:
            subprocess.run([{os.path.realpath(true)!r}])  # the ruleset still refuses what it does not name
            print("true ran")
        except PermissionError:
            print("true refused")
    """)
    env = child_env(CUDA_HOME=str(cuda), PATH="/usr/bin:/bin", P2T_SANDBOX="1", TMPDIR=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.split("\n")
    assert lines[0] == f"{os.path.realpath(cuda / 'compute-sanitizer' / 'compute-sanitizer')} 0", r.stdout
    assert lines[1] == f"{cuda / 'bin' / 'compute-sanitizer'} 0", r.stdout
    assert lines[2] == "true refused", r.stdout


def test_the_sanitizers_ports_are_the_only_tcp_a_confined_worker_may_bind_and_connect(tmp_path: Path) -> None:
    """compute-sanitizer talks to its target over TCP on 127.0.0.1 (on the H100 its target died with CUDA error 304
    under the ruleset that denied all TCP): the worker's own ports are granted, a neighbour's is still refused."""
    code = textwrap.dedent(f"""
        import socket
        from pytorch_to_triton.worker.confine import sandbox
        pol = sandbox.build_policy({str(tmp_path)!r}, {str(tmp_path / "s")!r}, [])
        pol.tcp_ports = sandbox.sanitizer_ports(pid=1234) or list(range(49152 + 4 * 1234, 49152 + 4 * 1235))
        sandbox._restrict(pol, sandbox.abi_version()[0])
        for port in (pol.tcp_ports[0], pol.tcp_ports[-1] + 1):
            srv = socket.socket()
            try:
                srv.bind(("127.0.0.1", port)); srv.listen(1)
                c = socket.create_connection(("127.0.0.1", port), timeout=5); c.close()
                print(port, "ok")
            except PermissionError:
                print(port, "refused")
            finally:
                srv.close()
    """)
    r = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    first, neighbour = r.stdout.split("\n")[:2]
    assert first.endswith(" ok") and neighbour.endswith(" refused"), r.stdout


@pytest.mark.parametrize("opt_in", [False, True])
def test_the_sanitizers_proc_grant_is_opt_in_because_it_opens_other_processes_environ(tmp_path: Path,
                                                                                      opt_in: bool) -> None:
    """For compute-sanitizer /proc is granted read + write + truncate (its target writes its own /proc entries); that
    opens the parent's /proc/<pid>/environ (the server's, with the user's tokens) too, so it is opt-in
    (P2T_SANDBOX_PROC=sanitizer) and the default ruleset keeps the parent's environ refused."""
    from pytorch_to_triton.worker.confine import sandbox
    code = textwrap.dedent(f"""
        import os
        from pytorch_to_triton.worker.confine import sandbox
        pol = sandbox.build_policy({str(tmp_path)!r}, {str(tmp_path / "s")!r}, [])
        if {opt_in!r}:
            pol.tcp_ports = [53152]
            sandbox._grant_proc(pol)
        sandbox._restrict(pol, sandbox.abi_version()[0])
        try:
            with open("/proc/self/oom_score_adj", "w") as f:  # O_TRUNC on its own entry, as the sanitizer's target
                f.write("0")
            print("own entry written")
        except PermissionError:
            print("own entry refused")
        try:
            open(f"/proc/{{os.getppid()}}/environ", "rb").read()
            print("parent environ read")
        except PermissionError:
            print("parent environ refused")
    """)
    r = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    want = ["own entry written", "parent environ read"] if opt_in else ["own entry refused", "parent environ refused"]
    assert r.stdout.split("\n")[:2] == want, r.stdout
    assert sandbox.sanitizer_ports() == [] or os.environ.get("P2T_SANDBOX_PROC") == "sanitizer"
