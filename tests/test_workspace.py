"""Path confinement, inline sources and source checks (every refusal has a test)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytorch_to_triton.errors import UsageError
from pytorch_to_triton.workspace import MAX_SOURCE_BYTES, Workspace, atomic_write


def test_resolve_inside(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    assert Workspace(tmp_path).resolve("a.py") == (tmp_path / "a.py").resolve()


def test_dotdot_escape_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret.py").write_text("x = 1\n")
    with pytest.raises(UsageError, match="outside the workspace"):
        Workspace(ws).resolve("../secret.py")


def test_absolute_escape_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="outside the workspace"):
        Workspace(tmp_path).resolve("/etc/passwd")


def test_symlink_escape_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "outside.py").write_text("x = 1\n")
    os.symlink(tmp_path / "outside.py", ws / "link.py")
    with pytest.raises(UsageError, match="outside the workspace"):
        Workspace(ws).resolve("link.py")


def test_missing_file_message(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not found"):
        Workspace(tmp_path).resolve("nope.py")


def test_relative_paths_read_from_the_base_folder(tmp_path: Path) -> None:
    """The CLI reads a path as the shell does (base = the current directory); the workspace only bounds it."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("x = 1\n")
    ws = Workspace(tmp_path, base=tmp_path / "sub")
    assert ws.resolve("a.py") == (tmp_path / "sub" / "a.py").resolve()
    assert ws.resolve("../b.py") == (tmp_path / "b.py").resolve()  # still inside the workspace
    assert Workspace(tmp_path).resolve("sub/a.py") == (tmp_path / "sub" / "a.py").resolve()  # MCP: from the root


def test_errors_name_the_current_directory_and_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "ws" / "sub").mkdir(parents=True)
    (tmp_path / "outside.py").write_text("x = 1\n")
    ws = Workspace(tmp_path / "ws", base=tmp_path / "ws" / "sub")
    sub, root = str((tmp_path / "ws" / "sub").resolve()), str((tmp_path / "ws").resolve())
    with pytest.raises(UsageError) as missing:
        ws.resolve("nope.py", what="reference")
    msg = str(missing.value)
    assert "'nope.py' not found" in msg and f"current directory {sub}" in msg and f"the workspace is {root}" in msg
    with pytest.raises(UsageError) as outside:
        ws.resolve("../../outside.py", what="candidate")
    msg = str(outside.value)
    assert "outside the workspace" in msg and sub in msg and root in msg and "--workspace" in msg
    with pytest.raises(UsageError, match=f"read from the workspace {root}"):  # the MCP form names the root alone
        Workspace(tmp_path / "ws").resolve("nope.py")


def test_non_utf8_refused(tmp_path: Path) -> None:
    p = tmp_path / "latin.py"
    p.write_bytes(b"# caf\xe9\nx = 1\n")
    with pytest.raises(UsageError, match="not valid UTF-8"):
        Workspace(tmp_path).read_source(p)


def test_huge_inline_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="limit"):
        Workspace(tmp_path).write_inline("#" * (MAX_SOURCE_BYTES + 1))


def test_inline_written_once_inside_state_dir(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    p1 = ws.write_inline("x = 1\n")
    p2 = ws.write_inline("x = 1\n")
    assert p1 == p2 and p1.read_text() == "x = 1\n"
    assert ws.state_dir in p1.parents


def test_atomic_write_keeps_old_copy_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    atomic_write(target, "old")

    class Boom(bytes):
        pass

    with pytest.raises(TypeError):
        atomic_write(target, 123)  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temp file left behind


@pytest.mark.parametrize("umask,mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_write_new_file_follows_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    """mkstemp's 0600 is not the user's choice: a new file gets what open() would give it (issue 29 item 8)."""
    old = os.umask(umask)
    try:
        atomic_write(tmp_path / "f.py", "x = 1\n")
    finally:
        os.umask(old)
    assert (tmp_path / "f.py").stat().st_mode & 0o777 == mode


def test_atomic_write_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    p = tmp_path / "run.sh"
    p.write_text("old\n")
    p.chmod(0o755)
    atomic_write(p, "new\n")
    assert p.read_text() == "new\n" and p.stat().st_mode & 0o777 == 0o755


def test_atomic_write_given_mode_wins(tmp_path: Path) -> None:
    """A private file (an MCP client config) is 0600 from its first byte, whatever the umask."""
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "config.toml", "token = 1\n", mode=0o600)
    finally:
        os.umask(old)
    assert (tmp_path / "config.toml").stat().st_mode & 0o777 == 0o600
