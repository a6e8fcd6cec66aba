"""Which of Landlock's three restrictions stops compute-sanitizer's target (CUDA error 304 under a confined worker,
H100 2026-12-06): the worker's own ruleset with one part opened at a time: fs (/ fully granted), net (TCP not
handled), scope (no signal/abstract-socket scoping). Run on a GPU machine:
PYTHONPATH=$PWD/server python3 benchmarks/explore/sanitizer_bisect.py [fs net scope none]"""

from __future__ import annotations

import subprocess
import sys
import tempfile

CHILD = r"""
import ctypes, os, subprocess, sys
from pytorch_to_triton.worker.confine import sandbox as sb
from pytorch_to_triton.worker.probe import sanitizer
opened = sys.argv[1]
exe = sanitizer.find()
pol = sb.build_policy(os.getcwd(), os.path.join(os.getcwd(), "s"), [])
abi = sb.abi_version()[0]
os.makedirs(os.path.join(os.getcwd(), "s"), exist_ok=True)
os.environ["TMPDIR"] = os.path.join(os.getcwd(), "s")
pol.grant(os.environ["TMPDIR"], sb.READ | sb.WRITE)
bits = {"fs": (1 << 16) - 1, "fs-exec": sb.EXECUTE, "fs-read": sb.READ_FILE | sb.READ_DIR,
        "fs-write": ((1 << 16) - 1) & ~(sb.EXECUTE | sb.READ_FILE | sb.READ_DIR | sb.IOCTL_DEV),
        "fs-ioctl": sb.IOCTL_DEV}
if opened in bits:
    pol.rules["/"] = bits[opened]
elif opened.startswith("rw:"):  # read + write files (no create, truncate, ioctl) on these paths
    for path in opened[3:].split(","):
        pol.rules[os.path.realpath(path)] = sb.READ | sb.WRITE_FILE
elif opened[:2] in ("x:", "X:", "i:", "t:"):  # read + execute / read + write + execute / read + write + ioctl
    extra = {"x:": sb.EXECUTE, "X:": sb.EXECUTE | sb.WRITE_FILE, "i:": sb.IOCTL_DEV | sb.WRITE_FILE,
             "t:": sb.WRITE_FILE | sb.TRUNCATE}[opened[:2]]
    for path in opened[2:].split(","):
        pol.rules[os.path.realpath(path)] = sb.READ | extra
elif opened.startswith("r:"):
    for path in opened[2:].split(","):
        pol.rules[os.path.realpath(path)] = sb.READ
elif opened.startswith("all:"):  # every right on these paths only (comma-separated; ~ is the home directory)
    for path in opened[4:].split(","):
        pol.rules[os.path.realpath(os.path.expanduser(path))] = (1 << 16) - 1
libc = sb._libc()
handled = sb._handled_fs(abi)
net = 0 if opened == "net" else sb.NET_BIND_TCP | sb.NET_CONNECT_TCP
scope = 0 if opened == "scope" else sb.SCOPE_ABSTRACT_UNIX_SOCKET | sb.SCOPE_SIGNAL
attr = sb._RulesetAttr(handled, net, scope)
fd = libc.syscall(sb.SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(24), ctypes.c_uint32(0))
for path, rights in pol.rules.items():
    try:
        pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        continue
    allowed = (rights if os.path.isdir(path) else rights & sb.FILE_BITS) & handled
    if allowed:
        rule = sb._PathBeneathAttr(allowed, pfd)
        assert libc.syscall(sb.SYS_ADD_RULE, fd, sb.RULE_PATH_BENEATH, ctypes.byref(rule), 0) == 0, path
    os.close(pfd)
for port in pol.tcp_ports if net else ():
    rule = sb._NetPortAttr(net, port)
    assert libc.syscall(sb.SYS_ADD_RULE, fd, sb.RULE_NET_PORT, ctypes.byref(rule), 0) == 0
libc.prctl(38, 1, 0, 0, 0)
assert libc.syscall(sb.SYS_RESTRICT_SELF, fd, 0) == 0
ports = pol.tcp_ports
extra = ["--port", str(ports[0]), "--max-connections", str(len(ports))] if ports else []
code = "import torch; x = torch.ones(4, device='cuda'); print('target ok', float(x.sum()))"
r = subprocess.run([exe, "--tool", "memcheck", *extra, sys.executable, "-c", code], capture_output=True, text=True,
                   env=sanitizer.child_env())
print("rc", r.returncode, "ok" if "target ok" in r.stdout else (r.stdout + r.stderr).strip().splitlines()[-1][:200])
"""

for opened in sys.argv[1:] or ["fs", "fs-exec", "fs-read", "fs-write", "fs-ioctl", "none"]:
    with tempfile.TemporaryDirectory() as ws:
        r = subprocess.run([sys.executable, "-c", CHILD, opened], cwd=ws, capture_output=True, text=True, timeout=90)
    print(f"{opened} opened: rc {r.returncode}:", (r.stdout + r.stderr).strip().splitlines()[-1:])
