"""Which host lines of the audited file the example call ran (audit/evidence.py weighs static cost findings by it).

A static `host_sync` on a line no probe call ran has no evidence of being on the forward path the example takes (a
one-time self-check behind a module-level cache, a backend the machine does not pick: issue 26, held_out_18). The
tracer records line events only in frames of the audited file, and none in its @triton.jit bodies (under the
interpreter they run as Python, one frame per program: tracing them would cost much and tell nothing about the host).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class LineCoverage:
    """Lines of one file run inside `watch()`, kernel bodies left out."""

    def __init__(self, target: Path, kernel_names: set[str]) -> None:
        self.file = str(target.resolve())
        self.kernels = kernel_names
        self.lines: set[int] = set()
        self._files: dict[str, bool] = {}

    def _ours(self, filename: str) -> bool:
        hit = self._files.get(filename)
        if hit is None:
            try:
                hit = str(Path(filename).resolve()) == self.file
            except (OSError, ValueError):
                hit = False
            self._files[filename] = hit
        return hit

    def _global(self, frame: Any, event: str, arg: Any) -> Callable[..., Any] | None:
        code = frame.f_code
        if event != "call" or code.co_name in self.kernels or not self._ours(code.co_filename):
            return None
        self.lines.add(frame.f_lineno)
        return self._local

    def _local(self, frame: Any, event: str, arg: Any) -> Callable[..., Any] | None:
        if event == "line":
            self.lines.add(frame.f_lineno)
        return self._local

    @contextmanager
    def watch(self) -> Iterator[None]:
        """Record while the block runs (this thread; a tracer already set, such as a debugger's, is kept)."""
        if sys.gettrace() is not None or threading.current_thread() is not threading.main_thread():
            yield
            return
        sys.settrace(self._global)
        try:
            yield
        finally:
            sys.settrace(None)


def jit_chain(obj: Any, depth: int = 6) -> Iterator[Any]:
    """obj, then what it wraps (an autotuner's or heuristics' .fn, down to the @triton.jit function and its Python
    function)."""
    for _ in range(depth):
        if obj is None:
            return
        yield obj
        obj = getattr(obj, "fn", None)


def kernel_names(module: Any) -> set[str]:
    """Names of the @triton.jit functions of a module (through an autotuner's or heuristics' .fn)."""
    out: set[str] = set()
    for name, obj in list(vars(module).items()) if module is not None else []:
        jit = next((o for o in jit_chain(obj) if hasattr(o, "arg_names") and hasattr(o, "fn")), None)
        if jit is not None:  # a JITFunction (or the interpreter's)
            out.add(getattr(jit.fn, "__name__", name))
    return out
