"""The files a call needs travel with it, by content and hash; the remote side rebuilds them in a scratch workspace.

Client side: `pack(args, root)` finds every argument that names a file inside the workspace (reference, candidate(s),
inline sources), adds each one's task sidecar (`<stem>.p2t.toml`) and small sibling modules (a task folder's helpers:
the worker puts a file's folder on sys.path), and returns a Bundle: relative path -> bytes, plus a hash over
(path, sha256) pairs. Remote side: `materialize(bundle, base)` writes it once under base/ws/<hash>/ (the same bundle
reuses the folder, so compiled kernels are reused too), and `rewrite(args, ...)` points the arguments there.
`map_back` turns remote paths in a result into the client's. No dask import here: this module is plain Python.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Siblings ride along only from small folders: a KernelBench level folder of 100 problems is not a task's helpers.
SIBLING_MAX_FILES = 20
SIBLING_MAX_BYTES = 512 << 10
SHIPPED_SUFFIXES = (".py", ".toml")
PATH_KEYS = ("reference", "candidate", "candidates")


@dataclass
class Bundle:
    """Files by workspace-relative path, and the hash that names them remotely."""

    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """sha256 over the sorted (path, content sha256) pairs, 24 hex digits."""
        h = hashlib.sha256()
        for rel in sorted(self.files):
            h.update(rel.encode() + b"\0" + hashlib.sha256(self.files[rel]).digest())
        return h.hexdigest()[:24]

    @property
    def size(self) -> int:
        """Bytes of file content shipped."""
        return sum(len(b) for b in self.files.values())


def _inside(path: Path, root: Path) -> str | None:
    try:
        return path.resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return None


def _add(bundle: Bundle, path: Path, root: Path) -> None:
    rel = _inside(path, root)
    if rel is None or rel in bundle.files or not path.is_file():
        return
    bundle.files[rel] = path.read_bytes()


def _siblings(folder: Path) -> list[Path]:
    files = sorted(p for p in folder.iterdir() if p.suffix in SHIPPED_SUFFIXES and p.is_file())
    if len(files) > SIBLING_MAX_FILES or sum(p.stat().st_size for p in files) > SIBLING_MAX_BYTES:
        return []
    return files


def pack(args: dict[str, Any], root: Path) -> Bundle:
    """The bundle of one call: the files its arguments name, their sidecars, small folders' siblings."""
    root = root.resolve()
    named: list[Path] = []
    for key in PATH_KEYS:
        value = args.get(key)
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and v:
                named.append(Path(v))
    bundle = Bundle()
    for p in named:
        _add(bundle, p, root)
        _add(bundle, p.with_name(p.stem + ".p2t.toml"), root)
    for folder in {p.parent for p in named if _inside(p, root) is not None}:
        for sib in _siblings(folder):
            _add(bundle, sib, root)
    return bundle


def materialize(files: dict[str, bytes], digest: str, base: Path) -> Path:
    """Write a bundle under base/ws/<digest>/ (once; each file atomically) and return that folder."""
    target = base / "ws" / digest
    for rel, data in files.items():
        dest = target / rel
        if dest.is_file() and dest.stat().st_size == len(data):
            continue  # the folder is named by the content hash: a file of the right size is this file
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(dest)
    target.mkdir(parents=True, exist_ok=True)
    return target


def rewrite(args: dict[str, Any], client_root: str, remote_root: Path) -> dict[str, Any]:
    """The call's arguments with the client's workspace paths pointed at the remote copy (measured GPU peaks are the
    GPU host's: its WorkerSlot adds them, peaks_store.py)."""
    prefix = client_root.rstrip("/") + "/"

    def one(v: Any) -> Any:
        if isinstance(v, str) and v.startswith(prefix):
            return str(remote_root / v[len(prefix):])
        return v

    out: dict[str, Any] = {}
    for k, v in args.items():
        if k == "workspace":
            out[k] = str(remote_root)
        elif isinstance(v, list):
            out[k] = [one(x) for x in v]
        else:
            out[k] = one(v)
    return out


def map_back(result: Any, remote_root: Path, client_root: str) -> Any:
    """A result with remote workspace paths (tracebacks, file names) written as the client's."""
    text = json.dumps(result)
    return json.loads(text.replace(json.dumps(str(remote_root))[1:-1], json.dumps(client_root)[1:-1]))
