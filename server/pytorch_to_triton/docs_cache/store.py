"""The cache on disk: atomic writes, a cross-process lock and index.json."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from .errors import DocsError

INDEX_NAME = "index.json"
LOCK_NAME = ".lock"
PAGES_DIR = "pages"
_TEMP_MARK = ".tmp-"


class IndexEntry(BaseModel):
    """What the cache knows about one page."""

    url: str
    slug: str
    kind: str
    file: str = Field(description="path relative to the cache directory")
    title: str = ""
    fetched_at: str | None = Field(default=None, description="last time the body was downloaded (UTC)")
    checked_at: str | None = Field(default=None, description="last time the server confirmed it (200 or 304)")
    etag: str | None = None
    last_modified: str | None = None
    size: int = Field(default=0, description="bytes of the markdown file")
    sha256: str = ""
    triton_version: str | None = None
    links: list[str] = Field(default_factory=list, description="same-site links, for page discovery")


class Index(BaseModel):
    """index.json: one entry per page URL."""

    schema_version: int = 1
    base_url: str = ""
    triton_version_docs: str | None = None
    triton_version_installed: str | None = None
    updated_at: str | None = None
    pages: dict[str, IndexEntry] = Field(default_factory=dict)


def now_iso() -> str:
    """Current UTC time, ISO 8601."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def age_s(stamp: str | None) -> float:
    """Seconds since an ISO timestamp (infinite when missing or unreadable)."""
    if not stamp:
        return float("inf")
    try:
        return time.time() - datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return float("inf")


def atomic_write(path: Path, data: bytes | str | Iterable[bytes]) -> None:
    """Write path via a temp file in the same directory and os.replace, so readers never see half a file."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    chunks: Iterable[bytes] = (data,) if isinstance(data, bytes) else data
    temp = path.with_name(f".{path.name}{_TEMP_MARK}{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        with open(temp, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def clean_temp_files(cache_dir: Path) -> int:
    """Remove temp files left by a killed writer; call only while holding the lock."""
    removed = 0
    for directory in (cache_dir, cache_dir / PAGES_DIR):
        if not directory.is_dir():
            continue
        for stale in directory.glob(f".*{_TEMP_MARK}*"):
            with contextlib.suppress(OSError):
                stale.unlink()
                removed += 1
    return removed


@contextlib.contextmanager
def cache_lock(cache_dir: Path, timeout_s: float) -> Iterator[None]:
    """Exclusive flock on cache_dir/.lock; works across threads (own descriptor each) and processes."""
    deadline = time.monotonic() + timeout_s
    with open(cache_dir / LOCK_NAME, "a+b") as handle:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise DocsError(
                        f"another fetch_triton_docs has held {cache_dir / LOCK_NAME} for {timeout_s:.0f} s; "
                        "wait for it to finish and call again"
                    ) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def load_index(cache_dir: Path, warnings: list[str]) -> Index:
    """Read index.json; an unreadable index is reported and replaced by an empty one."""
    path = cache_dir / INDEX_NAME
    if not path.exists():
        return Index()
    try:
        return Index.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError) as exc:
        warnings.append(f"{path} was unreadable ({type(exc).__name__}); rebuilding the index")
        return Index()


def save_index(cache_dir: Path, index: Index) -> None:
    """Write index.json atomically."""
    index.updated_at = now_iso()
    atomic_write(cache_dir / INDEX_NAME, index.model_dump_json(indent=1) + "\n")


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of data."""
    return hashlib.sha256(data).hexdigest()


def entry_file_ok(cache_dir: Path, entry: IndexEntry) -> bool:
    """True when the entry's file exists and still has the recorded content."""
    path = cache_dir / entry.file
    try:
        return sha256_bytes(path.read_bytes()) == entry.sha256
    except OSError:
        return False


def prepare_cache_dir(cache_dir: Path) -> Path:
    """Create cache_dir (and pages/) or raise DocsError saying why it is unusable."""
    cache_dir = Path(cache_dir).expanduser()
    try:
        (cache_dir / PAGES_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DocsError(
            f"cache_dir {cache_dir} is unusable ({exc}); pass a writable directory as cache_dir"
        ) from exc
    if not os.access(cache_dir, os.W_OK) or not os.access(cache_dir / PAGES_DIR, os.W_OK):
        raise DocsError(f"cache_dir {cache_dir} is not writable; pass a writable directory as cache_dir")
    return cache_dir.resolve()
