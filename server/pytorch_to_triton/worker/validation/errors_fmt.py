"""Turn a user's exception into {phase, type, message, file:line, kernel file:line, hint, user-frame traceback}.

A failure inside a kernel points at the kernel's own line, not at the wrapper's launch line:
* under the interpreter the kernel is plain Python run by triton/runtime/interpreter.py (GridExecutor.__call__
  calls the kernel function, compiled with the kernel file's name and line numbers), so the first user frames after
  an interpreter frame, followed through the exception's __cause__ chain (InterpreterError wraps the real error),
  are the kernel and the @jit helpers it called;
* a CompilationError carries the function's source (from its `def` line) and the AST node; Triton strips its
  code-generator frames, so we find that source in the user's files and add the node's line to the def line.
"""

from __future__ import annotations

import linecache
import os
import sys
import traceback
from pathlib import Path
from typing import Any

from ..confine.sandbox import refusal_note
from ..device.interp_hints import exception_hint

_OURS = Path(__file__).resolve().parent.parent.parent  # the pytorch_to_triton package: never a user frame
_COMPILE_ERRORS = ("CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct")


def _is_user_frame(filename: str, user_dirs: list[Path]) -> bool:
    try:
        p = Path(filename).resolve()
    except (OSError, ValueError):
        return False
    if p == _OURS or _OURS in p.parents:  # a workspace that contains this checkout (the tests') holds us too
        return False
    return any(d == p.parent or d in p.parents for d in user_dirs) and "site-packages" not in p.parts


def _is_interpreter_frame(filename: str) -> bool:
    return Path(filename).parts[-3:] == ("triton", "runtime", "interpreter.py")


def phase_of(exc: BaseException, default: str) -> str:
    """'compile' for Triton compilation errors, else the phase we were in."""
    mod = type(exc).__module__ or ""
    if mod.startswith("triton.compiler") or type(exc).__name__ in _COMPILE_ERRORS:
        return "compile"
    return default


def _chain(exc: BaseException) -> list[BaseException]:
    """exc and its causes, outermost first (InterpreterError -> the kernel's real error)."""
    out: list[BaseException] = []
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        out.append(e)
        seen.add(id(e))
        e = e.__cause__ if e.__cause__ is not None else (None if e.__suppress_context__ else e.__context__)
    return out


def _frames(chain: list[BaseException]) -> list[traceback.FrameSummary]:
    """The tracebacks of the chain joined outermost to innermost: each cause's traceback continues where the
    outer exception caught it, so this reads as one call stack from the launch into the kernel."""
    frames: list[traceback.FrameSummary] = []
    for e in chain:
        frames.extend(traceback.extract_tb(e.__traceback__))
    return frames


def _loc(filename: str, line: int, function: str = "") -> dict[str, Any]:
    return {"file": filename, "line": line, "function": function,
            "text": linecache.getline(filename, line).strip()}


def _interpreter_kernel_frames(frames: list[traceback.FrameSummary], user_dirs: list[Path]) -> list[dict[str, Any]]:
    """User frames after the first interpreter frame: the kernel, then the @jit helpers it called."""
    first = next((i for i, f in enumerate(frames) if _is_interpreter_frame(f.filename)), None)
    if first is None:
        return []
    out: list[dict[str, Any]] = []
    for f in frames[first:]:
        if _is_user_frame(f.filename, user_dirs) and f.lineno:
            loc = _loc(f.filename, f.lineno, f.name)
            if not out or (out[-1]["file"], out[-1]["line"]) != (loc["file"], loc["line"]):
                out.append(loc)
    return out


def _jit_files(chain: list[BaseException]) -> list[str]:
    """Files of the JIT functions being compiled: triton.compile's frame holds the ASTSource (src.fn.file_name;
    Triton <= 3.6 has no file_name: the file of the JITFunction's Python function, src.fn.fn)."""
    out: list[str] = []
    for e in chain:
        tb = e.__traceback__
        while tb is not None:
            for v in list(tb.tb_frame.f_locals.values()):
                try:  # a user object's __getattr__ may raise anything
                    fn = getattr(v, "fn", v)
                    name = getattr(fn, "file_name", None)
                    if not (isinstance(name, str) and hasattr(fn, "def_file_line_number")):
                        code = getattr(getattr(fn, "fn", None), "__code__", None)
                        name = code.co_filename if code is not None and hasattr(fn, "starting_line_number") else None
                    if isinstance(name, str):
                        out.append(name)
                except Exception:  # noqa: BLE001, S112
                    continue
            tb = tb.tb_next
    return out


def _user_files(frames: list[traceback.FrameSummary], user_dirs: list[Path], extra: list[str]) -> list[str]:
    """Files a kernel's source may live in: the frames' user files, the compiled functions' files, then user
    modules imported so far."""
    files = [f.filename for f in frames if _is_user_frame(f.filename, user_dirs)] + extra
    for mod in list(sys.modules.values()):
        name = getattr(mod, "__file__", None)
        if name and name.endswith(".py") and _is_user_frame(name, user_dirs):
            files.append(name)
    return list(dict.fromkeys(files))


def _find_source(src: str, files: list[str]) -> tuple[str, int] | None:
    """(file, line of `def`) of a @jit function's source (dedented, from its def line) among the files."""
    want = [s.strip() for s in src.split("\n")]
    while want and not want[-1]:
        want.pop()
    if not want:
        return None
    probe = want[: min(len(want), 40)]
    for name in files:
        lines = [s.strip() for s in linecache.getlines(name)]
        for i, line in enumerate(lines):
            if line == probe[0] and lines[i : i + len(probe)] == probe:
                return name, i + 1
    return None


def _compile_frames(chain: list[BaseException], frames: list[traceback.FrameSummary],
                    user_dirs: list[Path]) -> list[dict[str, Any]]:
    """Kernel locations of nested CompilationErrors (caller's call site first, the failing line last)."""
    files = None
    out: list[dict[str, Any]] = []
    for e in chain:
        if type(e).__name__ not in _COMPILE_ERRORS:
            continue
        src, lineno = getattr(e, "src", None), getattr(getattr(e, "node", None), "lineno", None)
        if not src or not isinstance(lineno, int):
            continue
        files = files if files is not None else _user_files(frames, user_dirs, _jit_files(chain))
        found = _find_source(src, files)
        if found is None:
            continue
        name, def_line = found
        func = src.split("(", 1)[0].replace("def", "", 1).strip()
        out.append(_loc(name, def_line + lineno - 1, func))
    return out


def _compile_reason(chain: list[BaseException]) -> str:
    """The innermost compile error's own message (the outer ones only point at call sites), or the exception it
    wraps (CompilationError(src, node, None) from e)."""
    inner = chain[-1]
    if type(inner).__name__ not in _COMPILE_ERRORS:
        return f"{type(inner).__name__}: {inner}"
    for e in reversed(chain):
        if type(e).__name__ in _COMPILE_ERRORS and getattr(e, "error_message", None):
            return str(e.error_message).strip()
    return ""


def describe(exc: BaseException, phase: str, user_dirs: list[Path]) -> dict[str, Any]:
    """The error record the reports carry; file:line is the kernel's line when the failure was inside one."""
    info: dict[str, Any] = {"phase": phase_of(exc, phase), "type": type(exc).__name__,
                            "message": str(exc)[:4000]}
    if isinstance(exc, SyntaxError):
        info.update(file=exc.filename, line=exc.lineno, text=(exc.text or "").rstrip())
        info["message"] = f"{exc.msg} ({Path(exc.filename or '?').name}, line {exc.lineno})"
    chain = _chain(exc)
    info["message"] += refusal_note(chain)
    frames = _frames(chain)
    outer = traceback.extract_tb(exc.__traceback__)
    first_interp = next((i for i, f in enumerate(outer) if _is_interpreter_frame(f.filename)), len(outer))
    launch = [f for f in outer[:first_interp] if _is_user_frame(f.filename, user_dirs)]
    if launch:
        last = launch[-1]
        info.setdefault("file", last.filename)
        info.setdefault("line", last.lineno)
        info.setdefault("text", (last.line or "").strip())
    kernel: list[dict[str, Any]] = []
    try:  # the report must come back even if locating the kernel trips over something unforeseen
        kernel = _locate_kernel(info, exc, chain, frames, launch, user_dirs)
    except Exception as e:  # noqa: BLE001
        info["kernel_location_error"] = f"{type(e).__name__}: {e}"[:300]
    user = [f for f in frames if _is_user_frame(f.filename, user_dirs)]
    lines = [f'  File "{f.filename}", line {f.lineno}, in {f.name}\n    {f.line or ""}' for f in user[-6:]]
    if info["phase"] == "compile":  # Triton drops its code-generator frames: show the kernel lines we found
        lines += [f'  File "{k["file"]}", line {k["line"]}, in {k["function"]} (kernel)\n    {k["text"]}'
                  for k in kernel]
    tail = traceback.format_exception_only(type(exc), exc)
    if chain[-1] is not exc:
        tail += traceback.format_exception_only(type(chain[-1]), chain[-1])
    info["traceback"] = ("Traceback (user frames only):\n" + "\n".join(lines) + "\n" + "".join(tail))[-6000:]
    return info


def _locate_kernel(info: dict[str, Any], exc: BaseException, chain: list[BaseException],
                   frames: list[traceback.FrameSummary], launch: list[traceback.FrameSummary],
                   user_dirs: list[Path]) -> list[dict[str, Any]]:
    """Add kernel_file/kernel_line/kernel_source_line (and the hint) to info; returns the kernel frames."""
    kernel = _interpreter_kernel_frames(frames, user_dirs) or _compile_frames(chain, frames, user_dirs)
    if kernel:
        k = kernel[-1]
        if launch:
            info["launch_file"], info["launch_line"] = launch[-1].filename, launch[-1].lineno
        info.update(kernel_file=k["file"], kernel_line=k["line"], kernel_source_line=k["text"],
                    kernel_function=k["function"], file=k["file"], line=k["line"], text=k["text"])
        if len(kernel) > 1:
            info["kernel_call_chain"] = kernel
        inner = chain[-1]
        where = f"in kernel {k['function']} at {Path(k['file']).name}:{k['line']}: {k['text']}"
        if info["phase"] == "compile":
            info["message"] = f"{_compile_reason(chain) or type(exc).__name__} ({where})"[:4000]
        elif inner is not exc:  # InterpreterError(repr(e)) from e: report e itself
            info["wrapped_as"] = type(exc).__name__
            info["type"] = type(inner).__name__
            info["message"] = f"{inner} ({where})"[:4000]
    hint = exception_hint(chain, os.environ.get("TRITON_INTERPRET") == "1")
    if hint:
        info.update(hint)
    return kernel
