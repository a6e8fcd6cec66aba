"""worker/confine/toolchain.py: the compilers Triton and Inductor would run, found the way they find them, and the programs
each driver runs; the sandbox's exec allowlist is built from it (tests/test_sandbox.py runs it confined)."""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pytorch_to_triton.worker.confine import sandbox, toolchain

GCC = shutil.which("gcc")


def _env(path: str, **extra: str) -> dict[str, str]:
    return {"PATH": path, **extra}


def test_the_rule_is_the_installed_tritons_own() -> None:
    """Triton 3.9 has _find_compiler (compared call by call); Triton 3.6 resolves inline in _build (its source is read:
    $CC, else gcc, else clang). Either way the same answers as toolchain.triton_c_compiler."""
    from triton.runtime import build

    if hasattr(build, "_find_compiler"):
        find = build._find_compiler.__wrapped__  # lru_cache'd in Triton
        saved = {k: os.environ.get(k) for k in ("CC", "PATH")}
        try:
            for env in ({"CC": "/opt/gcc/bin/gcc", "PATH": os.environ["PATH"]}, {"PATH": os.environ["PATH"]}):
                os.environ.pop("CC", None)
                os.environ.update(env)
                assert find("c") == toolchain.triton_c_compiler(env)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    else:
        src = inspect.getsource(build._build)
        assert 'os.environ.get("CC")' in src and 'shutil.which("gcc")' in src and 'shutil.which("clang")' in src
        assert "gcc if gcc is not None else clang" in src


def test_cc_wins_then_gcc_then_clang_on_path(tmp_path: Path) -> None:
    (tmp_path / "clang").write_text("")
    (tmp_path / "clang").chmod(0o755)
    assert toolchain.triton_c_compiler(_env(str(tmp_path))) == str(tmp_path / "clang")
    (tmp_path / "gcc").write_text("")
    (tmp_path / "gcc").chmod(0o755)
    assert toolchain.triton_c_compiler(_env(str(tmp_path))) == str(tmp_path / "gcc")
    assert toolchain.triton_c_compiler(_env(str(tmp_path), CC="/opt/gcc/bin/gcc")) == "/opt/gcc/bin/gcc"
    assert toolchain.cxx_compiler(_env(str(tmp_path), CXX="/opt/gcc/bin/g++")) == "/opt/gcc/bin/g++"
    assert toolchain.triton_c_compiler(_env(str(tmp_path / "none"))) is None


def test_no_compiler_is_said_and_nothing_is_granted(tmp_path: Path) -> None:
    tc = toolchain.resolve(_env(str(tmp_path)))
    assert tc.c_compiler is None and tc.executables() == [] and tc.read_dirs == []
    assert "no C compiler" in tc.describe()
    missing = toolchain.resolve(_env(str(tmp_path), CC=str(tmp_path / "gcc")))
    assert missing.c_compiler is None and "is not an executable file" in missing.notes[0]


@pytest.mark.skipif(GCC is None, reason="needs gcc")
def test_gcc_and_the_programs_it_runs_resolved_to_real_files() -> None:
    """cc1, as, ld, collect2 as gcc itself answers -print-prog-name (bare names looked up on PATH), each the real
    file behind its symlinks; the driver's prefix (above bin/) readable, never /."""
    tc = toolchain.resolve({"PATH": os.environ["PATH"]})
    assert tc.c_compiler == os.path.realpath(GCC)
    for prog in ("cc1", "as", "ld", "collect2"):
        answer = subprocess.run([GCC, f"-print-prog-name={prog}"], capture_output=True, text=True).stdout.strip()
        want = os.path.realpath(answer if os.sep in answer else shutil.which(answer) or answer)
        assert want in tc.programs, (prog, want, tc.programs)
    assert all(os.path.isfile(p) and os.path.realpath(p) == p for p in tc.executables())
    assert os.path.dirname(os.path.dirname(tc.c_compiler)) in tc.read_dirs


@pytest.mark.skipif(GCC is None, reason="needs gcc")
def test_the_ruleset_lets_exactly_the_resolved_compilers_run(tmp_path: Path) -> None:
    """build_policy: exec of Triton's compiler and its programs, no other compiler, no shell; the compiler's
    installation is read-only, and a prefix that is the home directory or / is never granted."""
    ws = tmp_path / "ws"
    ws.mkdir()
    fake = toolchain.Toolchain(c_compiler=os.path.realpath(GCC), programs=[], read_dirs=["/", os.path.expanduser("~")])
    pol = sandbox.build_policy(str(ws), str(tmp_path / "s"), [], tools=fake)
    assert pol.rules[os.path.realpath(GCC)] & sandbox.EXECUTE
    assert "/" not in pol.rules and os.path.realpath(os.path.expanduser("~")) not in pol.rules
    real = toolchain.resolve({"PATH": os.environ["PATH"], "CC": os.path.realpath(GCC)})
    pol = sandbox.build_policy(str(ws), str(tmp_path / "s"), [], tools=real)
    runnable = {p for p, r in pol.rules.items() if r & sandbox.EXECUTE}
    assert set(real.executables()) <= runnable
    for other in ("clang", "tcc", "sh", "bash", "dash"):  # never a shell, never a compiler Triton would not run
        found = shutil.which(other)
        if found and os.path.realpath(found) not in real.executables():
            assert os.path.realpath(found) not in runnable, other
    assert not any(pol.rules[d] & sandbox.WRITE_FILE for d in real.read_dirs if d in pol.rules)


def test_a_compiler_that_is_a_script_is_replaced_by_a_real_one_never_a_shell(tmp_path: Path) -> None:
    """A CC that is a shell script (the GPU image's CC=/opt/gcc/bin/gcc, seen 2026-12-06 on the H100) would need
    /bin/sh, which the sandbox never runs: the worker names a real compiler on PATH in CC instead, and says so; with
    none on PATH the script stays refused and the summary says why."""
    script = tmp_path / "gcc"
    script.write_text("#!/bin/sh\nexec /usr/bin/gcc \"$@\"\n")
    script.chmod(0o755)
    tc = toolchain.resolve({"PATH": os.environ["PATH"], "CC": str(script)})
    assert "is a script" in tc.describe() and "/bin/sh" not in tc.executables()
    assert str(script) not in tc.executables()
    assert tc.env["CC"] == tc.c_compiler == os.path.realpath(shutil.which("gcc")), tc
    alone = toolchain.resolve({"PATH": str(tmp_path), "CC": str(script)})
    assert alone.c_compiler == str(script) and not alone.env and "no other compiler is on PATH" in alone.describe()

