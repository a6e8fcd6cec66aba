"""The worker protocol: one JSON object per line over a dedicated pipe pair.

Server -> worker:  {"id": int, "op": "validate"|"benchmark"|"compiled"|"probe"|"ping"|"shutdown", "args": {...}}
                   ("probe", audit_kernel's probes: args target, harness, entry?, shape?, dtype?, only?, budget_s?,
                   sizes?, sizes_interpreter? (a KernelBench harness: the sidecar's); result probes, entry,
                   entry_line, launched, shape, dtype, device, safety, kernelbench; worker/probe/probes.py)
Worker -> server:  {"id": int, "type": "progress", "message": str, "progress": float|null, "total": float|null}
                   (progress null: a step that is not a counted run, e.g. the full-size dry run before the cases)
                   {"id": int, "type": "log", "level": "info"|"warning", "message": str}
                   {"id": int, "type": "case", "key": str, "case": str, "phase"|"done": ...}  (worker/validation/case_log.py)
                   {"id": int, "type": "result", "result": {...}}
                   {"id": int, "type": "error", "error": {"phase", "type", "message", "traceback"}}
The worker sends exactly one "result" or "error" per request, after any number of progress/log lines.
It redirects its own fd 1 to fd 2 at start, so user prints can never reach this channel.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

MAX_LINE_BYTES = 64 * 1024 * 1024  # a result larger than this is a bug in the worker, not in user code


def _clean(value: Any) -> Any:
    """Make floats JSON-safe (NaN/Inf become strings) so the reader never chokes."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def encode(message: dict[str, Any]) -> bytes:
    """One protocol line."""
    return (json.dumps(_clean(message), default=str) + "\n").encode()


def write_message(fd: int, message: dict[str, Any]) -> None:
    """Write one message to a pipe fd, looping over partial writes."""
    data = encode(message)
    while data:
        n = os.write(fd, data)
        data = data[n:]


class LineReader:
    """Incremental reader of protocol lines from a non-blocking fd."""

    def __init__(self, fd: int):
        self.fd = fd
        self._buf = b""
        self.eof = False

    def feed(self) -> list[dict[str, Any]]:
        """Read what is available; return the complete messages."""
        try:
            chunk = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            return []
        if not chunk:
            self.eof = True
        self._buf += chunk
        if len(self._buf) > MAX_LINE_BYTES:
            raise ValueError("worker sent a protocol line larger than 64 MiB")
        out = []
        while b"\n" in self._buf:
            line, self._buf = self._buf.split(b"\n", 1)
            if line.strip():
                out.append(json.loads(line))
        return out
