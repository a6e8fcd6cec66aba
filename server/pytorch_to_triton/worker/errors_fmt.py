"""Turn a user's exception into {phase, type, message, traceback trimmed to the user's files}."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any


def _is_user_frame(filename: str, user_dirs: list[Path]) -> bool:
    try:
        p = Path(filename).resolve()
    except (OSError, ValueError):
        return False
    return any(d == p.parent or d in p.parents for d in user_dirs) and "site-packages" not in p.parts


def phase_of(exc: BaseException, default: str) -> str:
    """'compile' for Triton compilation errors, else the phase we were in."""
    mod = type(exc).__module__ or ""
    if mod.startswith("triton.compiler") or type(exc).__name__ in ("CompilationError", "CompileTimeAssertionFailure"):
        return "compile"
    return default


def describe(exc: BaseException, phase: str, user_dirs: list[Path]) -> dict[str, Any]:
    """The error record the reports carry; line numbers point into the user's file."""
    info: dict[str, Any] = {"phase": phase_of(exc, phase), "type": type(exc).__name__,
                            "message": str(exc)[:4000]}
    if isinstance(exc, SyntaxError):
        info.update(file=exc.filename, line=exc.lineno, text=(exc.text or "").rstrip())
        info["message"] = f"{exc.msg} ({Path(exc.filename or '?').name}, line {exc.lineno})"
    frames = traceback.extract_tb(exc.__traceback__)
    user = [f for f in frames if _is_user_frame(f.filename, user_dirs)]
    if user:
        last = user[-1]
        info.setdefault("file", last.filename)
        info.setdefault("line", last.lineno)
        info.setdefault("text", (last.line or "").strip())
    lines = [f'  File "{f.filename}", line {f.lineno}, in {f.name}\n    {f.line or ""}' for f in user[-6:]]
    tail = traceback.format_exception_only(type(exc), exc)
    info["traceback"] = ("Traceback (user frames only):\n" + "\n".join(lines) + "\n" + "".join(tail))[-6000:]
    return info
