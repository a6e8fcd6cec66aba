"""The workspace: path confinement, inline sources written to real files, the state directory."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from .errors import UsageError

STATE_DIR = ".pytorch-to-triton"
MAX_SOURCE_BYTES = 1024 * 1024  # a kernel file larger than 1 MiB is almost surely a mistake


def _umask() -> int:
    """The process's umask, read without changing it where /proc allows (os.umask only reads by setting)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


def atomic_write(path: Path, data: bytes | str, mode: int | None = None) -> None:
    """Write a file so that a crash at any point leaves either the old or the new content; `mode` (else the
    replaced file's, else the umask's) is set before any byte is written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp creates 0600; the file is the user's (a scaffolded task, a journal): give it the mode open() would,
        # or the mode of the file it replaces.
        if mode is None:
            try:
                mode = path.stat().st_mode & 0o7777
            except OSError:
                mode = 0o666 & ~_umask()
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Workspace:
    """A project root that bounds every path a tool touches, and the folder relative paths are read from: the root
    for the MCP tools (their paths are workspace-relative), the shell's current directory for the CLI (`--workspace`
    bounds what a command may touch; it does not re-root the arguments)."""

    def __init__(self, root: Path | str, base: Path | str | None = None):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise UsageError(f"workspace root {self.root} is not a directory")
        self.base = Path(base).resolve() if base is not None else self.root

    @property
    def state_dir(self) -> Path:
        """Where our own files live (inline sources, Triton cache, results, journal)."""
        return self.root / STATE_DIR

    def _read_from(self) -> str:
        """Where a relative path was read from, for an error message: both folders when they differ."""
        if self.base == self.root:
            return f"relative paths are read from the workspace {self.root}"
        return f"relative paths are read from the current directory {self.base}; the workspace is {self.root}"

    def resolve(self, path: str, *, what: str = "file", must_exist: bool = True) -> Path:
        """Resolve a user path against the base folder; refuse anything outside the root (.., symlinks)."""
        if not path or not str(path).strip():
            raise UsageError(f"{what} path is empty: pass a file path ({self._read_from()})")
        raw = Path(path).expanduser()
        candidate = raw if raw.is_absolute() else self.base / raw
        resolved = candidate.resolve()
        if resolved != self.root and self.root not in resolved.parents:
            if self.base == self.root:  # an MCP tool's path
                raise UsageError(f"{what} {path!r} resolves to {resolved}, outside the workspace {self.root}; move the "
                                 "file into the workspace or start the server with --workspace pointing above it")
            raise UsageError(f"{what} {path!r} resolves to {resolved} (relative paths are read from the current "
                             f"directory {self.base}), outside the workspace {self.root}; move the file into the "
                             "workspace or pass --workspace DIR pointing above it")
        if must_exist and not resolved.is_file():
            raise UsageError(f"{what} {path!r} not found (looked at {resolved}); {self._read_from()}; check the path "
                             "or pass the code inline")
        return resolved

    def read_source(self, path: Path, *, what: str = "file") -> str:
        """Read a Python source file, refusing huge or non-UTF-8 files with a clear message."""
        size = path.stat().st_size
        if size > MAX_SOURCE_BYTES:
            raise UsageError(f"{what} {path} is {size} bytes; the limit is {MAX_SOURCE_BYTES} (1 MiB) per source file")
        try:
            return path.read_bytes().decode("utf-8")
        except UnicodeDecodeError as e:
            raise UsageError(f"{what} {path} is not valid UTF-8 (byte {e.start}); save it as UTF-8") from None

    def write_inline(self, code: str, *, what: str = "code") -> Path:
        """Write inline source to a real file (@triton.jit refuses sources that live in no file)."""
        if not isinstance(code, str) or not code.strip():
            raise UsageError(f"{what} is empty")
        try:
            data = code.encode("utf-8", errors="strict")
        except UnicodeEncodeError as e:  # a lone surrogate, e.g. "\udcff" from a JSON escape
            raise UsageError(f"{what} cannot be saved as UTF-8: {e.reason} at character {e.start} "
                             f"({code[e.start:e.end]!r}); remove or replace that character") from None
        if len(data) > MAX_SOURCE_BYTES:
            raise UsageError(f"{what} is {len(data)} bytes; the limit is {MAX_SOURCE_BYTES} (1 MiB)")
        digest = hashlib.sha256(data).hexdigest()[:16]
        path = self.state_dir / "inline" / f"src_{digest}.py"
        if not path.exists():
            atomic_write(path, data)
        return path

    def relative(self, path: Path) -> str:
        """A path for display: relative to the root when inside it."""
        try:
            return str(path.relative_to(self.root))
        except ValueError:
            return str(path)
