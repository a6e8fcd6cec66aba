"""The probes' example call from the file's own callers (issue 45, part 3), when no harness is given.

The server's audit/discover.py lists the candidates in order (tests, script code, benchmarks, docstrings of the
file, then of its package). Here each runs in this worker (confined, as the probes are) with the file's
kernel-launching functions watched (`entries`: 'softmax', 'LayerNorm.apply', 'RMSNorm.forward'): the first call of
one is recorded (the arguments bound by its signature, tensors copied before it runs) and the caller is stopped
there by an exception it cannot catch (caller_env.CallerStopped); nothing the caller does after, its own asserts
included, decides anything. The recorded call is the probes' example: the shapes, dtypes and values the callers
give are the contract. A candidate that fails (a module the package imports and this environment lacks, a fixture,
a size over the interpreter's cap, the time limit) is said with its reason, and the next is tried.

`Example` stands where a harness module stands for probes.py: `entry`, `make_inputs(case)`, `shape`, `dtype`,
`reference` (the torch result a test compares the call with, audit/caller_args.compared, at the test's rtol/atol;
else None: the probes judge metamorphically, as with a harness without one). The loading and watching is
caller_watch.py's, the caller's surroundings caller_env.py's. Its sizes are the caller's own
size parameters (a test's parametrized M, N; a benchmark's x value): the sizes probe moves them and runs the caller
again; a caller without any (script code, a docstring) is not run at other sizes, and the sizes probe says so.
"""

from __future__ import annotations

import ast
import functools
import inspect
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from ..validation.tasks import TaskError, dtype_name
from . import probe_inputs as pi
from .caller_env import MAX_ELEMENTS, CallerStopped, TooLarge, caller_env
from .caller_watch import Recorded, Unusable, Watch, caller_module, load_target

TIME_PER_CALLER_S = 30.0  # one candidate's run; a test that builds its inputs and calls the entry takes < 1 s
SEARCH_SHARE = 0.3  # of the probes' budget: the most the search may take before the probes start
AGAIN_CAP = 4  # times the example's cap, for the sizes probe's variants (layer norm at M=8: its M=17 is 2.1 times)


# ---- running one caller -----------------------------------------------------------------------------------------
class Session:
    """One candidate: the target loaded and watched, its caller run (again at other sizes for the sizes probe)."""

    def __init__(self, target: Path, req: dict[str, Any], src: dict[str, Any], interpreter: bool) -> None:
        self.target, self.req, self.src, self.interpreter = target, req, src, interpreter
        self.mod: Any = None
        self.watch: Watch | None = None
        self.caller_mod: Any = None
        self.params: dict[str, Any] = {}  # the caller's arguments as run
        self.sizes: list[str] = list(src.get("sizes") or [])
        self.shrunk: list[str] = []  # sizes made smaller for the interpreter: 'M 1151 -> 7'

    def first(self, timeout_s: float) -> tuple[str, Callable[..., Any], tuple[Any, ...], dict[str, Any]]:
        """Load, run the caller, return the recorded call; Unusable with the reason otherwise. Under the
        interpreter a caller that builds a tensor over its cap is run again with its first size argument above 1
        made smaller (caller_env.MAX_ELEMENTS); one without such an argument is refused."""
        script = self.src["name"] == "<module>"
        own = Path(self.src["file"]).resolve() == self.target.resolve()
        try:
            with caller_env(self.interpreter, timeout_s):
                self.mod, self.watch = load_target(self.target, self.req, script and own,
                                                   MAX_ELEMENTS if self.interpreter else None)
                self.watch.armed = script and not own  # another file's script code runs as it is imported
                try:
                    self.caller_mod = caller_module(self.target, self.mod, self.src)
                finally:
                    self.watch.armed = False
            for _ in range(6):
                if script or self.watch.call is not None:
                    break
                try:
                    with caller_env(self.interpreter, timeout_s):
                        self._run({})
                except TooLarge as e:
                    if not self._shrink(e):
                        raise
        except Recorded:
            pass
        except Unusable:
            raise
        except CallerStopped as e:
            raise Unusable(str(e)) from None
        except BaseException as e:  # noqa: BLE001 - the caller's own failure (SystemExit too): this one is unusable
            raise Unusable(f"{type(e).__name__}: {str(e)[:200]}") from None
        if self.watch is None or self.watch.call is None:
            raise Unusable(f"it ran to its end without calling {', '.join(self.req['entries'][:4])}")
        return self.watch.call

    def _shrink(self, e: TooLarge) -> bool:
        """The caller's first size argument above 1 made small enough for the cap (its own size, never the
        problem's structure); False when it has none."""
        now = _size_values(self.params, self.sizes)
        key = next((k for k in self.sizes if now[k] > 1), None)
        if key is None:
            return False
        old = now[key]
        new = max(1, min(old // 2, old * MAX_ELEMENTS // max(e.n, 1)))
        self.params = _with(self.params, {key: new})
        self.shrunk.append(f"{key} {old} -> {new}")
        return True

    def again(self, overrides: dict[str, Any], timeout_s: float) -> tuple[str, Callable[..., Any], tuple[Any, ...],
                                                                           dict[str, Any]]:
        """The caller run again with some of its arguments changed (the sizes probe); ValueError when it gives no
        call of the same entry."""
        assert self.watch is not None
        first, cap = self.watch.call, self.watch.cap
        self.watch.call = None
        if cap is not None:  # the sizes probe's variants reach past the example's (17, 2^k + 1): a looser cap
            self.watch.cap = AGAIN_CAP * cap
        try:
            with caller_env(self.interpreter, timeout_s):
                self._run(overrides)
        except Recorded:
            pass
        except BaseException as e:  # noqa: BLE001 - said as the sizes probe's note ("make_inputs refused")
            raise ValueError(f"the caller at {overrides}: {type(e).__name__}: {str(e)[:160]}") from None
        finally:
            self.watch.cap = cap
        got, self.watch.call = self.watch.call, first
        if got is None or first is None or got[0] != first[0]:
            raise ValueError(f"the caller at {overrides} did not call {first[0] if first else 'the entry'}")
        return got

    def _run(self, overrides: dict[str, Any]) -> None:
        assert self.watch is not None
        kind, name, g = self.src["kind"], self.src["name"], vars(self.caller_mod)
        self.watch.armed = True
        try:
            if name == "__main__":
                node = next(n for n in ast.parse(Path(self.src["file"]).read_text(errors="replace")).body
                            if isinstance(n, ast.If) and n.lineno == self.src["line"])
                sys.argv[:] = [self.src["file"]]
                exec(compile(ast.Module(node.body, []), self.src["file"], "exec"), g)
            elif name.endswith("__doc__"):
                exec(compile(self.src["code"], f"<docstring examples of {self.src['spec']}>", "exec"), dict(g))
            elif kind in ("test", "benchmark", "package_wrapper") and name in g:
                self._function(g[name], g, overrides)
            else:
                raise Unusable(f"{name} is not in its module as run here")
        finally:
            self.watch.armed = False

    def _function(self, fn: Any, g: dict[str, Any], overrides: dict[str, Any]) -> None:
        """A test or benchmark: its parametrization's values (evaluated in its module), or a perf_report's."""
        if hasattr(fn, "benchmarks") and hasattr(fn, "fn"):  # triton.testing.perf_report
            self._perf_report(fn, overrides)
            return
        if not self.params:
            self.params = {k: eval(v, g) for k, v in (self.src.get("params") or {}).items()}  # noqa: S307
            self.sizes = _sizes(self.params)
        fn(**_with(self.params, overrides))

    def _perf_report(self, mark: Any, overrides: dict[str, Any]) -> None:
        """The benchmark's smallest x value, with each of its lines in turn (Triton's first) until one calls an
        entry: its arguments become the caller's size parameters."""
        bench = mark.benchmarks[0] if isinstance(mark.benchmarks, (list, tuple)) else mark.benchmarks
        names = list(bench.x_names)
        xs = [x if isinstance(x, (list, tuple)) else [x] * len(names) for x in bench.x_vals]
        x = min(xs, key=lambda v: math.prod(int(abs(a)) or 1 for a in v if isinstance(a, int)))
        args = {**dict(bench.args or {}), **dict(zip(names, x))}
        if not self.params:
            self.params = args
            self.sizes = _sizes(args)
        failed: Exception | None = None
        for line in sorted(bench.line_vals, key=lambda v: "triton" not in str(v).lower()):
            try:  # a line that calls no entry ends normally, one that fails (apex missing) too: the next
                mark.fn(**_with(self.params, overrides), **{bench.line_arg: line})
            except Exception as e:  # noqa: BLE001 - said if no line calls an entry
                failed = e
        if failed is not None:
            raise failed


def _sizes(params: dict[str, Any]) -> list[str]:
    """The caller's size arguments: its integers ('M') and the integers of its shape tuples ('shape[1]')."""
    out = []
    for k, v in params.items():
        if isinstance(v, int) and not isinstance(v, bool):
            out.append(k)
        elif isinstance(v, (tuple, list)) and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
            out += [f"{k}[{i}]" for i in range(len(v))]
    return out


def _size_values(params: dict[str, Any], sizes: list[str]) -> dict[str, int]:
    """size name -> its value ('shape[1]' -> params['shape'][1])."""
    out = {}
    for k in sizes:
        name, _, idx = k.partition("[")
        v = params.get(name)
        out[k] = v[int(idx.rstrip("]"))] if idx and isinstance(v, (tuple, list)) else v
    return {k: v for k, v in out.items() if isinstance(v, int)}


def _with(params: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """The arguments with some sizes (or the dtype) changed; 'shape[1]' changes one element of a shape tuple."""
    out = dict(params)
    for k, v in overrides.items():
        name, _, idx = k.partition("[")
        if idx and isinstance(out.get(name), (tuple, list)):
            seq = list(out[name])
            seq[int(idx.rstrip("]"))] = v
            out[name] = type(out[name])(seq)
        else:
            out[k] = v
    return out


class Example:
    """A harness in the probes' terms (probes.py) made from one recorded call."""

    SKIP_PROBES: dict[str, str] = {}

    def __init__(self, session: Session, call: tuple[str, Callable[..., Any], tuple[Any, ...], dict[str, Any]],
                 notes: list[str], timeout_s: float) -> None:
        self.session, self.timeout_s = session, timeout_s
        name, fn, args, kwonly = call
        self.name, self.args = name, list(args)
        self.entry = _with_keywords(fn, kwonly)
        self.reference, self.TOLERANCES = _reference(session, fn, len(args))
        self.file = Path(session.src["file"])
        floats = [t for t in self.args if isinstance(t, torch.Tensor) and t.is_floating_point()]
        self.torch_dtype = floats[0].dtype if floats else torch.float32
        self.dtype = dtype_name(self.torch_dtype)
        self.shape: Any = _size_values(session.params, session.sizes)
        self.dtype_param = next((k for k, v in session.params.items() if isinstance(v, torch.dtype)), None)
        self.label = session.src.get("label") or session.src["spec"]
        if session.src["call"].endswith("x_vals)"):  # a perf_report benchmark: the values it ran at
            shown = ", ".join(f"{k}={v!r}" for k, v in session.params.items())
            self.label = self.label.replace(session.src["call"], f"{session.src['name']}({shown})")
        if session.shrunk:
            self.label += (f", with {', '.join(session.shrunk)} for the CPU interpreter (its cap of {MAX_ELEMENTS:,} "
                           "elements per tensor; the caller's own size argument)")
        self.spec = session.src["spec"]
        self.call_text = _call_text(session, name)
        self.notes = [f"example call: {self.label}; it calls {self.call_text}", *notes]
        if self.reference is not None:
            self.notes.append(f"reference: the caller's own, `{session.src['reference']['expr']}` (line "
                              f"{session.src['reference']['line']} compares the call with it)")
        self.not_for: dict[str, str] = {} if self.shape else {
            "sizes": f"the example call comes from {self.label}, which takes no size argument: the sizes probe "
                     "moves only a caller's own sizes (give harness= to probe others)"}

    def make_inputs(self, case: Any) -> list[Any]:
        """The recorded call's arguments; at other sizes (or another dtype) the caller's run again."""
        shape = case.shape if isinstance(case.shape, dict) else {}
        moved = {k: v for k, v in shape.items() if self.shape.get(k) != v}
        want = case.dtype
        if moved or (want != self.torch_dtype and self.dtype_param):
            over = dict(moved)
            if self.dtype_param and want != self.torch_dtype:
                over[self.dtype_param] = want
            _, _, args, _ = self.session.again(over, self.timeout_s)
            return list(args)
        out = pi.fresh_copies(self.args)
        if want != self.torch_dtype:  # no dtype argument: the floating inputs in the case's dtype
            out = [t.to(want) if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in out]
        return out


def _reference(session: Session, fn: Callable[..., Any], n: int) -> tuple[Callable[..., Any] | None, dict[str, Any]]:
    """The torch result the test compares its call with (audit/caller_args.compared), as a function of the probes' inputs:
    each name the test passed to the entry is bound to the argument in its place, the test's other arguments to
    their values; with the test's own rtol/atol for the example's dtype. (None, {}) when the test has none."""
    ref = session.src.get("reference") or {}
    if not ref:
        return None, {}
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    where = {a: i for i, a in enumerate(ref["args"]) if a}
    where.update({name: names.index(kw) for kw, name in ref["keywords"].items() if kw in names})
    if any(i >= n for i in where.values()):
        return None, {}
    code = compile(ref["expr"], f"<reference compared at {session.src['spec']} line {ref['line']}>", "eval")
    g = vars(session.caller_mod)

    def reference(*args: Any) -> Any:
        return eval(code, g, {**session.params, **{name: args[i] for name, i in where.items()}})  # noqa: S307

    tol = {}
    if "rtol" in ref or "atol" in ref:
        floats = [t for t in session.watch.call[2] if isinstance(t, torch.Tensor) and t.is_floating_point()] \
            if session.watch and session.watch.call else []
        if floats:
            tol[dtype_name(floats[0].dtype)] = (ref.get("rtol", 0.0), ref.get("atol", 0.0))
    return reference, tol


def _with_keywords(fn: Callable[..., Any], kwonly: dict[str, Any]) -> Callable[..., Any]:
    """The entry called with the recorded keyword-only arguments (the probes pass positional ones)."""
    if not kwonly:
        return fn

    @functools.wraps(fn)
    def entry(*args: Any) -> Any:
        return fn(*args, **{k: v for k, v in pi.fresh_copies([kwonly])[0].items()})

    return entry


def _call_text(session: Session, name: str) -> str:
    """'LayerNorm.apply(x: float16[1151, 8192], w_shape, ...)' for the report."""
    _, _, args, kwonly = session.watch.call if session.watch and session.watch.call else (None, None, (), {})
    parts = [f"{dtype_name(a.dtype)}[{', '.join(map(str, a.shape))}]" if isinstance(a, torch.Tensor) else
             repr(a)[:24] for a in [*args, *kwonly.values()]]
    return f"{name}({', '.join(parts)})"[:300]


def from_callers(target: Path, req: dict[str, Any], rt: Any, budget_s: float, emit: Any = None) -> Example:
    """The first candidate that gives a call (the reasons of those before it kept as notes); TaskError (usage) when
    none does, naming each."""
    reasons: list[str] = []
    deadline = time.monotonic() + max(10.0, SEARCH_SHARE * budget_s)
    for i, src in enumerate(req.get("sources") or []):
        left = deadline - time.monotonic()
        if left <= 1:
            reasons.append(f"{src['spec']}: not tried (the search's time is spent)")
            continue
        if emit:
            emit("progress", message=f"example call from {src['spec']}", progress=i + 1, total=len(req["sources"]))
        session = Session(target, req, src, rt.interpreter)
        try:
            call = session.first(min(TIME_PER_CALLER_S, left))
        except Unusable as e:
            reasons.append(f"example call from {src['spec']} not usable: {e}")
            if session.watch is not None:
                session.watch.remove()
            continue
        return Example(session, call, reasons, min(TIME_PER_CALLER_S, max(5.0, left)))
    raise TaskError("inputs", "no usable example call: " + "; ".join(reasons), usage=True)

