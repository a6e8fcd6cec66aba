"""The worker confines itself (Landlock) first thing, before it imports torch and long before any user file.

What the ruleset grants (everything else is denied, root included: Landlock does not look at capabilities):

- read: the workspace, the Python environment (prefixes, every sys.path directory, this package), system
  libraries and headers (/usr, /lib*, a few /etc files), CUDA and driver paths, /proc and /sys;
- read + write + ioctl: /dev/null, /dev/zero, /dev/full, /dev/{u,}random and the /dev/nvidia* devices;
- read + write: the worker's scratch root (a fresh subdirectory per call, `begin_call`), the Triton cache and the
  Inductor cache (directories of their own under the state dir);
- execute: the C compiler Triton resolves ($CC, else gcc, else clang on PATH) and the C++ compiler of Triton and
  Inductor ($CXX, else g++, else clang++), each as its real file, plus the programs those drivers run (cc1, as, ld,
  collect2, ... as `-print-prog-name` answers: worker/confine/toolchain.py); ldconfig, uname, ptxas and the other tools in
  Triton's package, CUDA's bin, this Python; no shell;
- network (ABI >= 4): no TCP bind or connect, except, on a machine with compute-sanitizer and a CUDA device, a small
  per-worker range of high ports that the audit's sanitizer talks to its target over (its --port/--max-connections,
  `sanitizer_ports`; the sanitizer's target could not initialise CUDA without them); scopes (ABI >= 6): no signals to, and no abstract unix sockets of,
  processes outside the sandbox.

A Landlock domain cannot be widened later, so the warm worker gets one scratch directory for its whole life; each
call starts with it empty (the server empties it after each call: sandbox_host.after_call). Resource limits
(open files, file size, CPU time per call) are set here too. Where the kernel has no Landlock (older Linux, a
container whose seccomp profile blocks the syscalls, macOS) the worker runs unconfined and says so in every
result's runtime. references/sandbox.md says what is and is not covered.
"""

from __future__ import annotations

import ctypes
import errno
import glob
import os
import resource
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import toolchain

# Syscall numbers are the same on x86_64 and aarch64 (the generic table).
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2
PR_SET_NO_NEW_PRIVS = 38

# handled_access_fs bits (include/uapi/linux/landlock.h) and the ABI that introduced them.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6

FILE_BITS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the only rights a rule on a file may carry
READ = READ_FILE | READ_DIR
WRITE = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_SYM | REFER
         | TRUNCATE)
DEVICE = READ_FILE | WRITE_FILE | IOCTL_DEV

DEFAULT_FILE_BYTES = 1 << 30  # RLIMIT_FSIZE: Triton/Inductor artifacts are < 50 MB; a candidate's file stops at 1 GiB
DEFAULT_OPEN_FILES = 4096  # torch + Triton hold ~150 descriptors on the dev CPU
# CPU seconds per call, all threads: the default timeout (600 s) times every core, so no call that the wall-clock
# timeout lets finish is stopped; it bounds what a call's children burn before the server's sweep.
DEFAULT_CALL_CPU_S = 600 * (os.cpu_count() or 1)
# Programs found on PATH that may run (the compilers are not here: toolchain.resolve finds the ones Triton uses).
EXEC_TOOLS = ("ldconfig", "uname", "openssl", "nvidia-smi", "ptxas", "cuobjdump", "nvdisasm", "nvcc", "nvlink",
              "fatbinary")
# Triton's knobs naming its CUDA tools (triton.knobs.nvidia: TRITON_PTXAS_PATH, ...): exec follows them too.
TRITON_TOOL_VARS = ("TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf", "localtime",
             "os-release", "alternatives", "host.conf", "hosts", "gai.conf", "mime.types", "timezone")
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _NetPortAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in the uapi header: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@dataclass
class Policy:
    """What the worker may touch: path -> rights, plus the limits."""

    rules: dict[str, int] = field(default_factory=dict)
    scratch_root: str = ""
    tools: toolchain.Toolchain = field(default_factory=toolchain.Toolchain)
    file_bytes: int = DEFAULT_FILE_BYTES
    call_cpu_s: int = DEFAULT_CALL_CPU_S
    tcp_ports: list[int] = field(default_factory=list)  # bind + connect allowed (compute-sanitizer's channel)

    def grant(self, path: str | Path | None, rights: int) -> None:
        """Add rights on a path (its real path; missing paths are skipped when the ruleset is built)."""
        if not path:
            return
        real = os.path.realpath(str(path))
        self.rules[real] = self.rules.get(real, 0) | rights


@dataclass
class State:
    """What was enforced, for every result's runtime; the per-call scratch directory."""

    enabled: bool = False
    summary: str = "sandbox: off"
    abi: int = 0
    scratch_root: str = ""
    call_dir: str = ""
    calls: int = 0
    call_cpu_s: int = DEFAULT_CALL_CPU_S
    tcp_ports: list[int] = field(default_factory=list)  # the ports the ruleset lets bind and connect


STATE = State()


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> tuple[int, str]:
    """The kernel's Landlock ABI (0 when absent) and, when absent, why."""
    if not sys.platform.startswith("linux"):
        return 0, f"no Landlock on {sys.platform}"
    libc = _libc()
    v = libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    if v < 0:
        e = ctypes.get_errno()
        why = {errno.ENOSYS: "the kernel has no Landlock, or a seccomp filter blocks it (ENOSYS)",
               errno.EOPNOTSUPP: "Landlock is built in but disabled at boot (EOPNOTSUPP)"}.get(e, os.strerror(e))
        return 0, why
    return int(v), ""


def _handled_fs(abi: int) -> int:
    bits = (1 << 13) - 1  # ABI 1: EXECUTE .. MAKE_SYM
    if abi >= 2:
        bits |= REFER
    if abi >= 3:
        bits |= TRUNCATE
    if abi >= 5:
        bits |= IOCTL_DEV
    return bits


def _grant_proc(pol: Policy) -> None:
    """/proc: everything that is not another process (cpuinfo, meminfo, sys/, driver/nvidia/, ...) plus this worker's
    own /proc/<pid>. Other processes' entries stay unreadable: the server's /proc/<pid>/environ holds the user's
    tokens, which the worker's scrubbed environment does not. A child of the worker (the C compiler, ptxas) cannot
    read its own /proc/self either; P2T_SANDBOX_PROC=all grants the whole of /proc if a tool needs it.
    compute-sanitizer needs more (P2T_SANDBOX_PROC=sanitizer on a CUDA machine with the sanitizer: pol.tcp_ports
    set): its target truncates and writes entries of its own /proc/<pid> as it starts, and dies with CUDA error 304
    when it cannot (found on the H100 by benchmarks/explore/sanitizer_bisect.py: read + write + truncate on /proc is
    the least that runs). Its pid is not known when the ruleset is made, so /proc is granted whole, and with it other
    processes' entries, the server's environ included (a confined process read its parent's: tests/test_sandbox.py).
    Hence opt-in, said in every result's sandbox summary; without it a confined worker's audit says the sanitizer
    was not run and why."""
    if pol.tcp_ports:
        pol.grant("/proc", READ | WRITE_FILE | TRUNCATE)
        return
    if os.environ.get("P2T_SANDBOX_PROC") == "all":
        pol.grant("/proc", READ)
        return
    pol.grant("/proc", READ_DIR)
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    for name in names:
        if not name.isdigit() and name not in ("self", "thread-self"):
            pol.grant(f"/proc/{name}", READ if os.path.isdir(f"/proc/{name}") else READ_FILE)
    pol.grant(f"/proc/{os.getpid()}", READ)


def _site_dirs() -> list[str]:
    out = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    out += [p for p in sys.path if p and os.path.isdir(p)]
    return out


def cuda_roots() -> list[str]:
    """The CUDA toolkit's roots this process names: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda (those set, once each)."""
    out = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    return [b for i, b in enumerate(out) if b and b not in out[:i]]


SANITIZER_PORTS = 4  # compute-sanitizer's --max-connections for one worker: it runs one child at a time


def sanitizer_ports(pid: int | None = None) -> list[int]:
    """The TCP ports a worker's compute-sanitizer children may use, when P2T_SANDBOX_PROC=sanitizer asks for the
    sanitizer inside the sandbox and this machine has it and a CUDA device (else none): compute-sanitizer and its target talk over TCP on 127.0.0.1 from --port, one port a
    connection, and Landlock's network rules name ports only. A range of its own per worker, in the dynamic range
    (49152-65535), chosen from the pid, so that two workers do not meet; P2T_SANITIZER_PORT fixes its start."""
    if os.environ.get("P2T_SANDBOX_PROC") != "sanitizer" or not glob.glob("/dev/nvidia[0-9]*") \
            or not _sanitizer_present():
        return []
    fixed = os.environ.get("P2T_SANITIZER_PORT", "")
    slots = (65536 - 49152) // SANITIZER_PORTS
    base = int(fixed) if fixed.isdigit() else 49152 + SANITIZER_PORTS * ((os.getpid() if pid is None else pid) % slots)
    return list(range(base, min(base + SANITIZER_PORTS, 65536)))


def _sanitizer_present() -> bool:
    return bool(shutil.which("compute-sanitizer")) or any(
        os.path.exists(os.path.join(b, "bin", "compute-sanitizer")) for b in cuda_roots())


def _exec_paths(tools: toolchain.Toolchain) -> list[str]:
    """Executables the toolchain runs: the compilers Triton and Inductor resolve and the programs they run
    (toolchain.py), a few tools found on PATH, the ELF loader, this Python, the binaries in Triton's package and
    CUDA's bin."""
    found = [shutil.which(t) for t in EXEC_TOOLS] + [sys.executable, "/sbin/ldconfig", "/usr/sbin/ldconfig"]
    found += tools.executables()
    found += [os.environ[v] for v in TRITON_TOOL_VARS if os.environ.get(v)]
    found += glob.glob("/lib*/ld-linux*.so*") + glob.glob("/usr/lib*/ld-linux*.so*")
    found += glob.glob("/lib/*-linux-gnu/ld-linux*.so*") + glob.glob("/usr/lib/*-linux-gnu/ld-linux*.so*")
    found += ["/usr/local/nvidia/bin"] + [os.path.join(base, "bin") for base in cuda_roots()]
    # compute-sanitizer (the audit's memcheck on a GPU): bin/compute-sanitizer leads into the toolkit's
    # compute-sanitizer/ directory, whose launcher and subreaper run too (exec of the link alone was refused: EACCES)
    found += [os.path.join(base, "compute-sanitizer") for base in cuda_roots()]
    if shutil.which("compute-sanitizer"):
        found.append(os.path.dirname(os.path.realpath(shutil.which("compute-sanitizer"))))
    try:
        import importlib.util

        for pkg, sub in (("triton", "backends"), ("torch", "bin")):  # ptxas, cuobjdump, nvdisasm: Triton's own;
            spec = importlib.util.find_spec(pkg)  # torch's CUDA 13 wheels ship a ptxas that Triton is pointed at
            if spec is not None and spec.origin:
                found.append(os.path.join(os.path.dirname(spec.origin), sub))
    except (ImportError, ValueError):
        pass
    found += [p for p in os.environ.get("P2T_SANDBOX_EXEC", "").split(os.pathsep) if p]
    return [p for p in found if p]


def _home_or_above(path: str) -> bool:
    """True for the user's home directory and its ancestors: granting one would open ~/.ssh."""
    home = os.path.realpath(os.path.expanduser("~"))
    real = os.path.realpath(path)
    return real == home or home.startswith(real.rstrip("/") + "/") or real == "/"


def build_policy(workspace: str, scratch_root: str, caches: list[str],
                 tools: toolchain.Toolchain | None = None) -> Policy:
    """The ruleset for one worker: see the module docstring. `tools`: the compilers (toolchain.resolve() when None)."""
    tools = toolchain.resolve() if tools is None else tools
    pol = Policy(scratch_root=scratch_root, tools=tools)
    pol.file_bytes = int(os.environ.get("P2T_SANDBOX_FILE_BYTES") or DEFAULT_FILE_BYTES)
    pol.call_cpu_s = int(os.environ.get("P2T_SANDBOX_CPU_S") or DEFAULT_CALL_CPU_S)
    pol.grant(workspace, READ)
    pkg = str(Path(__file__).resolve().parent.parent.parent.parent)  # the directory that holds pytorch_to_triton
    for d in [*_site_dirs(), pkg]:
        if not _home_or_above(d):  # a sys.path entry equal to $HOME (or /) would expose the whole home
            pol.grant(d, READ)
    for d in ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt/conda", "/usr/local/nvidia",
              "/usr/local/cuda", "/sys", "/run/nvidia-persistenced"):
        pol.grant(d, READ)
    pol.tcp_ports = sanitizer_ports()
    _grant_proc(pol)
    for var in ("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "VIRTUAL_ENV", "TRITON_LIBCUDA_PATH"):  # libcuda: -lcuda
        if os.environ.get(var) and not _home_or_above(os.environ[var]):
            pol.grant(os.environ[var], READ)
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        if d and not _home_or_above(d):
            pol.grant(d, READ)
    for name in ETC_FILES:
        pol.grant(f"/etc/{name}", READ if os.path.isdir(f"/etc/{name}") else READ_FILE)
    pol.grant("/dev", READ_DIR)
    for dev in [*DEVICES, *glob.glob("/dev/nvidia*"), *glob.glob("/dev/nvidia-caps/*")]:
        pol.grant(dev, DEVICE if not os.path.isdir(dev) else READ | DEVICE)
    for d in tools.read_dirs:  # the compilers' installations (specs, include, crt*.o, libgcc): never home or /
        if not _home_or_above(d):
            pol.grant(d, READ)
    for path in _exec_paths(tools):
        pol.grant(path, EXECUTE | READ_FILE if not os.path.isdir(path) else EXECUTE | READ)
    for d in [scratch_root, *caches]:
        os.makedirs(d, exist_ok=True)
        pol.grant(d, READ | WRITE)
    for d in extra_writable():
        pol.grant(d, READ | WRITE)
    return pol


def extra_writable() -> list[str]:
    """P2T_SANDBOX_WRITABLE: more directories user code may write (os.pathsep-separated; existing ones only, never
    the home directory or one above it). The fault suite's fixtures report through one."""
    out = []
    for d in os.environ.get("P2T_SANDBOX_WRITABLE", "").split(os.pathsep):
        if d and os.path.isdir(d) and not _home_or_above(d):
            out.append(d)
    return out


def _restrict(pol: Policy, abi: int) -> None:
    """Build the ruleset and apply it to this process (and, by inheritance, everything it starts)."""
    libc = _libc()
    handled = _handled_fs(abi)
    attr = _RulesetAttr(handled, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = 8 if abi < 4 else 16 if abi < 6 else 24  # the struct grew with the ABI; older kernels want it short
    fd = libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        for path, rights in pol.rules.items():
            try:
                pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a path this machine does not have
            try:
                is_dir = os.path.isdir(path)
                allowed = (rights if is_dir else rights & FILE_BITS) & handled
                if not allowed:
                    continue
                rule = _PathBeneathAttr(allowed, pfd)
                if libc.syscall(SYS_ADD_RULE, ctypes.c_int(fd), ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(rule),
                                ctypes.c_uint32(0)) < 0:
                    e = ctypes.get_errno()
                    raise OSError(e, f"landlock_add_rule({path}): {os.strerror(e)}")
            finally:
                os.close(pfd)
        for port in pol.tcp_ports if abi >= 4 else ():
            rule = _NetPortAttr(NET_BIND_TCP | NET_CONNECT_TCP, port)
            if libc.syscall(SYS_ADD_RULE, ctypes.c_int(fd), ctypes.c_int(RULE_NET_PORT), ctypes.byref(rule),
                            ctypes.c_uint32(0)) < 0:
                e = ctypes.get_errno()
                raise OSError(e, f"landlock_add_rule(tcp port {port}): {os.strerror(e)}")
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0)) < 0:
            e = ctypes.get_errno()
            raise OSError(e, f"landlock_restrict_self: {os.strerror(e)}")
    finally:
        os.close(fd)


def _set_limits(pol: Policy) -> list[str]:
    """Open files, file size (a write past it fails with EFBIG instead of killing the worker), CPU per call."""
    done = []
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # inherited across exec: children get EFBIG too
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = DEFAULT_OPEN_FILES if hard == resource.RLIM_INFINITY else min(DEFAULT_OPEN_FILES, hard)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
        done.append(f"{want} open files")
    except (ValueError, OSError):
        pass
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (pol.file_bytes, pol.file_bytes))
        done.append(f"files <= {pol.file_bytes >> 20} MiB")
    except (ValueError, OSError):
        pass
    done.append(f"{pol.call_cpu_s} CPU s per call")
    return done


def _block_landlock_for_test() -> None:
    """P2T_SANDBOX_TEST_NO_LANDLOCK=1: install a real seccomp filter that answers ENOSYS to the Landlock syscalls,
    as a container runtime's default profile does, so tests exercise the 'kernel lacks Landlock' path for real."""
    import struct

    arch = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}.get(os.uname().machine)
    if arch is None:
        return
    ld_abs, jeq, ret = 0x20, 0x15, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K
    allow, enosys = 0x7FFF0000, 0x00050000 | errno.ENOSYS
    prog = [(ld_abs, 0, 0, 4), (jeq, 0, 5, arch), (ld_abs, 0, 0, 0), (jeq, 2, 0, SYS_CREATE_RULESET),
            (jeq, 1, 0, SYS_ADD_RULE), (jeq, 0, 1, SYS_RESTRICT_SELF), (ret, 0, 0, enosys), (ret, 0, 0, allow)]
    raw = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw)

    class _Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = _Fprog(len(prog), ctypes.addressof(buf))
    libc = _libc()
    libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
        raise OSError(ctypes.get_errno(), "seccomp filter refused")


def wanted() -> bool:
    """The server asked for confinement (P2T_SANDBOX=1, its default)."""
    return os.environ.get("P2T_SANDBOX") == "1"


def confine(workspace: str) -> State:
    """Confine this worker when P2T_SANDBOX=1 (the server's default): Landlock where the kernel has it, resource
    limits always. Never raises: a machine without Landlock runs unconfined and STATE.summary says so."""
    if not wanted():
        why = os.environ.get("P2T_SANDBOX_OFF_WHY") or "--no-sandbox or P2T_SANDBOX=0"
        STATE.summary = f"sandbox: off ({why}: user code can touch whatever this user can)"
        return STATE
    tmp_root = os.environ.get("TMPDIR") or tempfile.gettempdir()
    scratch = os.path.join(tmp_root, f"w{os.getpid()}")
    _clear_stale_scratch(tmp_root)
    caches = [os.environ[k] for k in ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR") if os.environ.get(k)]
    pol = build_policy(workspace, scratch, caches)
    os.environ.update(pol.tools.env)  # a compiler named by a script: Triton and Inductor run the real one instead
    STATE.scratch_root, STATE.call_cpu_s = scratch, pol.call_cpu_s
    _use_scratch(scratch)  # the slot's temp dir is not writable once confined
    limits = _set_limits(pol)
    if os.environ.get("P2T_SANDBOX_TEST_NO_LANDLOCK") == "1":
        _block_landlock_for_test()
    abi, why = abi_version()
    if abi <= 0:
        STATE.summary = (f"sandbox: NOT ENFORCED ({why}); user code can read and write what this user can; "
                         f"limits only: {', '.join(limits)}")
        return STATE
    threads = _thread_count()
    try:
        _restrict(pol, abi)
    except OSError as e:
        STATE.summary = f"sandbox: NOT ENFORCED (Landlock ABI {abi} refused the ruleset: {e}); limits only"
        return STATE
    extra = extra_writable()
    home = ("home unreadable outside the workspace" if not _home_or_above(workspace) else
            "HOME READABLE: the workspace is your home directory or above it; start the server in a project folder")
    parts = [f"sandbox: landlock v{abi}", "fs read-only except scratch and the Triton/Inductor caches"
             + (f" (and {', '.join(extra)}: P2T_SANDBOX_WRITABLE)" if extra else ""),
             home, f"exec limited to Triton's compilers and CUDA tools (no shell; {pol.tools.describe()})"]
    ports = pol.tcp_ports
    STATE.tcp_ports = list(ports) if abi >= 4 else []
    parts.append(("tcp denied" + (f" except ports {ports[0]}-{ports[-1]} (compute-sanitizer's channel)" if ports else ""))
                 if abi >= 4 else "tcp NOT denied (ABI < 4)")
    if ports:
        parts.append("/proc readable and writable for compute-sanitizer (P2T_SANDBOX_PROC=sanitizer: other processes' "
                     "/proc entries, the server's environment included, are readable)")
    if abi >= 6:
        parts.append("signals and abstract unix sockets scoped")
    if threads > 1:  # Landlock ABI < 8 cannot confine threads that already run
        parts.append(f"{threads - 1} thread(s) started before confinement stay unconfined")
    STATE.enabled, STATE.abi = True, abi
    STATE.summary = ", ".join(parts + limits)
    return STATE


def _thread_count() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def _clear_stale_scratch(tmp_root: str) -> None:
    """Remove the scratch roots of workers that are gone (a killed worker cannot clean its own)."""
    try:
        entries = os.listdir(tmp_root)
    except OSError:
        return
    for name in entries:
        if name.startswith("w") and name[1:].isdigit() and not os.path.exists(f"/proc/{name[1:]}"):
            shutil.rmtree(os.path.join(tmp_root, name), ignore_errors=True)


def begin_call() -> None:
    """The scratch directory as this call's TMPDIR (empty: the server empties it after every call) and a fresh
    CPU-time budget. The same directory serves every call: a fresh one per call cost 1.5-2 ms (mkdir + rmtree on
    the dev VM's ext4) against 0.02 ms for the server's scan of an empty one."""
    if not STATE.scratch_root:
        return
    STATE.calls += 1
    STATE.call_dir = STATE.scratch_root
    _use_scratch(STATE.scratch_root)  # set again each call: the previous candidate may have changed them
    used = resource.getrusage(resource.RUSAGE_SELF)
    cpu = int(used.ru_utime + used.ru_stime) + STATE.call_cpu_s
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_CPU)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu if hard == resource.RLIM_INFINITY else min(cpu, hard), hard))
    except (ValueError, OSError):
        pass


def _use_scratch(path: str) -> None:
    for var in ("TMPDIR", "TEMP", "TMP"):
        os.environ[var] = path
    tempfile.tempdir = path


def end_call() -> None:
    """The call is over: the server empties the scratch (sandbox_host.after_call), after it has killed what the
    call left running, so that nothing writes into it afterwards."""
    STATE.call_dir = ""


def refusal_note(chain: list[BaseException]) -> str:
    """A few words for an error the sandbox caused (EACCES/EPERM from the ruleset, EFBIG from the file-size limit),
    so that a report says why the candidate failed, not only 'Permission denied'; '' for anything else."""
    if not STATE.enabled and not STATE.scratch_root:
        return ""
    codes = {e.errno for e in chain if isinstance(e, OSError)}
    if errno.EFBIG in codes:
        return f" [sandbox: files are limited to {_file_limit_mib()} MiB]"
    if STATE.enabled and codes & {errno.EACCES, errno.EPERM}:
        return (" [refused by the sandbox: the workspace is read-only, write to tempfile.gettempdir(); no home, "
                "shell or TCP; see references/sandbox.md]")
    return ""


def _file_limit_mib() -> int:
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return -1 if soft == resource.RLIM_INFINITY else soft >> 20
