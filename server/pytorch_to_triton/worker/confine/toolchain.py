"""The C and C++ compilers the worker's toolchain will run, and what each of them runs in turn: the sandbox's exec
allowlist (worker/confine/sandbox.py) is built from this, not from a list of names.

Who compiles what inside a worker:
- Triton builds C helpers with a C compiler: Triton 3.6 builds every kernel's launcher stub on its first launch, and
  every version builds its driver utilities (cuda_utils) once. Triton 3.6 to 3.9 resolve the compiler the same way
  (triton/runtime/build.py: `_build` in 3.6, `_find_compiler("c")` in 3.9): `$CC` (the `triton.knobs.build.cc`
  knob reads it), else `gcc` on PATH, else `clang` on PATH. The path is used as it is (`subprocess.check_call([cc,
  ...])`), so a bare name is found on PATH by exec.
- Triton 3.9 builds C++ sources with `$CXX`, else `g++`, else `clang++`; Inductor's C++ (CPU kernels, its C++
  wrapper) uses `$CXX`, else `g++` (torch._inductor.config.cpp.cxx). One rule serves both: `$CXX`, `g++`, `clang++`.

A compiler driver runs more programs: gcc runs cc1 (cc1plus for C++), as, collect2 and ld (lto-wrapper for LTO);
clang runs itself and the linker. The driver says where each one is: `cc -print-prog-name=cc1` answers an absolute
path when it found the program in its own directories, or the bare name when exec will search PATH (`as`, `ld` on
most systems). The driver also reads its own installation (specs, its include directory, crt*.o, libgcc), so its
prefix (the directory above its bin/, e.g. /opt/gcc for /opt/gcc/bin/gcc) is readable too.

Building Triton 3.6's launchers before confinement is not possible: one is built per kernel signature, at that
kernel's first launch (Triton 3.9 launches through one prebuilt launcher). So exec follows the compiler instead.

Everything here runs before confinement, in the worker's own environment (the one Triton will see: the server passes
CC and CXX through when each names one executable, worker_client.scrubbed_env). The 9 queries of a gcc/g++ pair run
in parallel, once per worker start: 58-123 ms on the dev VM under a load of 11 on its 2 cores (~12 ms when quieter).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

# collect2 runs the first of real-ld, collect-ld, ld it finds in the driver's directories, then ld on PATH.
C_HELPERS = ("cc1", "as", "collect2", "real-ld", "collect-ld", "ld", "lto-wrapper")
CXX_HELPERS = ("cc1plus", "as", "collect2", "real-ld", "collect-ld", "ld")
QUERY_TIMEOUT_S = 10.0


@dataclass
class Toolchain:
    """What the sandbox lets the worker execute and read for compiling."""

    c_compiler: str | None = None  # the real file of Triton's C compiler, None when there is none
    cxx_compiler: str | None = None
    programs: list[str] = field(default_factory=list)  # real files the drivers run (cc1, as, ld, collect2, ...)
    read_dirs: list[str] = field(default_factory=list)  # the drivers' installations (prefixes, gcc's install dir)
    notes: list[str] = field(default_factory=list)  # what could not be resolved, in words
    # CC/CXX for the worker's own environment, set before confinement: a compiler named by a script (the H100/H200
    # image's CC=/opt/gcc/bin/gcc is a shell wrapper) is replaced by a real one on PATH, since no shell may run.
    env: dict[str, str] = field(default_factory=dict)

    def executables(self) -> list[str]:
        """Every file to allow exec of: the compilers and their programs, each once."""
        out: list[str] = []
        for p in [self.c_compiler, self.cxx_compiler, *self.programs]:
            if p and p not in out:
                out.append(p)
        return out

    def describe(self) -> str:
        """A few words for the sandbox summary: which compiler, how many helper programs."""
        if not self.c_compiler:
            return "no C compiler found (Triton cannot build its launchers)"
        return f"C compiler {self.c_compiler} (+{len(self.programs)} programs it runs)" + "".join(
            f"; {n}" for n in self.notes)


def _which(name: str, env: Mapping[str, str]) -> str | None:
    """`name` as exec would find it with env's PATH (an absolute or relative path is taken as it is)."""
    return shutil.which(name, path=env.get("PATH", os.defpath))


def triton_c_compiler(env: Mapping[str, str] | None = None) -> str | None:
    """The C compiler Triton 3.6-3.9 would run in a process with this environment, as Triton names it (not resolved):
    $CC, else gcc on PATH, else clang on PATH; None when there is none."""
    env = os.environ if env is None else env
    if env.get("CC") is not None:
        return env["CC"]
    return _which("gcc", env) or _which("clang", env)


def cxx_compiler(env: Mapping[str, str] | None = None) -> str | None:
    """The C++ compiler of Triton 3.9 and Inductor: $CXX, else g++ on PATH, else clang++ on PATH."""
    env = os.environ if env is None else env
    if env.get("CXX") is not None:
        return env["CXX"]
    return _which("g++", env) or _which("clang++", env)


def _real(path: str | None, env: Mapping[str, str]) -> str | None:
    """The real file exec would run for `path` (a bare name is looked up on PATH), or None if there is none."""
    if not path:
        return None
    found = path if os.sep in path else _which(path, env)
    if not found or not os.path.isfile(found):
        return None
    return os.path.realpath(found)


def _ask(cc: str, flags: list[str], env: Mapping[str, str]) -> dict[str, subprocess.Popen]:
    """Start one `cc <flag>` per flag at once (answers collected by _answers)."""
    procs = {}
    for flag in flags:
        try:
            procs[flag] = subprocess.Popen([cc, flag], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                           stdin=subprocess.DEVNULL, env=dict(env), text=True)
        except OSError:
            continue
    return procs


def _answers(procs: dict[str, subprocess.Popen]) -> dict[str, str]:
    out = {}
    for flag, p in procs.items():
        try:
            text, _ = p.communicate(timeout=QUERY_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            continue
        if p.returncode == 0:
            out[flag] = text.strip()
    return out


def _is_script(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"#!"
    except OSError:
        return False


def _install_dir(search_dirs: str) -> str | None:
    """gcc's `install:` directory (-print-search-dirs), resolved; clang prints none."""
    for line in search_dirs.splitlines():
        if line.startswith("install:"):
            d = os.path.realpath(line.split(":", 1)[1].strip())
            return d if os.path.isdir(d) else None
    return None


def _unscripted(tc: Toolchain, var: str, cc: str | None, names: tuple[str, ...], env: Mapping[str, str]) -> str | None:
    """`cc`, or, when it is a script (its shell may not run under the sandbox), the first real compiler of `names` on
    PATH, which the worker then names in `var` (tc.env); with none, the script stays and the notes say so."""
    if not cc or not _is_script(cc):
        return cc
    for name in names:
        real = _real(name, env)
        if real and not _is_script(real):
            tc.env[var] = real
            tc.notes.append(f"{var} {cc} is a script (no shell runs under the sandbox): the worker uses {real} "
                            f"({name} on PATH)")
            return real
    tc.notes.append(f"{cc} is a script: the shell it needs cannot run under the sandbox, and no other compiler is on "
                    f"PATH; set {var} to the compiler it runs")
    return cc


def resolve(env: Mapping[str, str] | None = None) -> Toolchain:
    """The compilers this environment's Triton and Inductor would run, the programs they run, and the directories
    they read. Never raises: what cannot be resolved is left out (exec of it is then refused) and said in notes."""
    env = dict(os.environ if env is None else env)
    tc = Toolchain()
    named_c, named_cxx = triton_c_compiler(env), cxx_compiler(env)
    tc.c_compiler, tc.cxx_compiler = _real(named_c, env), _real(named_cxx, env)
    if named_c and not tc.c_compiler:
        tc.notes.append(f"Triton's C compiler {named_c!r} (CC or PATH) is not an executable file")
    tc.c_compiler = _unscripted(tc, "CC", tc.c_compiler, ("gcc", "cc", "clang"), env)
    tc.cxx_compiler = _unscripted(tc, "CXX", tc.cxx_compiler, ("g++", "c++", "clang++"), env)
    jobs: list[tuple[str, dict[str, subprocess.Popen]]] = []
    for cc, helpers in ((tc.c_compiler, C_HELPERS), (tc.cxx_compiler, CXX_HELPERS)):
        if cc and cc == tc.cxx_compiler and tc.c_compiler and os.path.dirname(cc) == os.path.dirname(tc.c_compiler):
            helpers = ("cc1plus",)  # g++ beside gcc: the same installation answers the same for the rest
            jobs.append((cc, _ask(cc, [f"-print-prog-name={h}" for h in helpers], env)))
        elif cc:
            jobs.append((cc, _ask(cc, [f"-print-prog-name={h}" for h in helpers] + ["-print-search-dirs"], env)))
    for cc, procs in jobs:
        answers = _answers(procs)
        for flag, answer in answers.items():
            if flag == "-print-search-dirs":
                install = _install_dir(answer)
                if install and install not in tc.read_dirs:
                    tc.read_dirs.append(install)
                continue
            prog = _real(answer, env) if answer else None
            if prog and prog != cc and prog not in tc.programs:
                tc.programs.append(prog)
        prefix = os.path.dirname(os.path.dirname(cc))  # /opt/gcc for /opt/gcc/bin/gcc
        if prefix not in tc.read_dirs:
            tc.read_dirs.append(prefix)
    return tc
