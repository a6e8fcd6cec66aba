"""compute-sanitizer over the audit probes' launches on a CUDA machine (issue 35, item 3). Imports no torch.

On a GPU the probes see an out-of-bounds access only when it leaves the allocation (a CUDA error) or reads a
poisoned guard byte into an output; a read a few elements past a tensor inside the caching allocator's block passes
(measured on an H100: memcheck itself reported 0 errors for a kernel reading 24 floats past a 1000-float tensor until
PYTORCH_NO_CUDA_MEMORY_CACHING=1 gave each tensor its own allocation). So after the probes ran, the chosen variants
(the example call, every failing variant that can be a P0, and the variants of the probes that would expose a static
memory suspect) run again in ONE child per tool:

    compute-sanitizer --tool memcheck --print-limit N python -m pytorch_to_triton.worker.probe.rerun TARGET --harness H
        --mark --only "example: example" --only "sizes: shape (17,)" ...

(with no harness, `--caller-request FILE` instead of --harness: the caller the server found and the example came
from, as the worker was given it, in a JSON file of the worker's scratch directory; the child runs that caller again
without searching for it, so the worker needs none of the server's audit/discover.py).

with PYTORCH_NO_CUDA_MEMORY_CACHING=1, under a timeout. `--mark` prints MARK + the variant before each call, so an
error is put on the variant that ran it. memcheck (out-of-bounds and misaligned accesses) runs on all of them;
racecheck only on the example call, since it sees shared-memory hazards only (Triton's own reductions and layout
conversions), not races between programs on global memory. Triton compiles with -lineinfo unless
TRITON_DISABLE_LINE_INFO=1 (3.9: backends/nvidia/compiler.py make_cubin; 3.6 is checked by PART=sanitizer), so the
child drops that variable and each error names the kernel's file and line.

parse() reads the sanitizer's text into records; audit/sanitizer_evidence.py (server side) turns them into findings.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..confine import sandbox

MARK = "P2T-SANITIZER-VARIANT: "
# The label of the memory-safety evidence where no sanitizer ran (no GPU): the interpreter's bounds.py stands in.
INTERPRETER = "interpreter bounds check, compute-sanitizer not run"
EXAMPLE = "example: example"
MAX_VARIANTS = 8  # one child runs them all; each one's compile is cached from the probe run before it
PRINT_LIMIT = 40  # per child: memcheck reports every faulting thread, the first ones say where
TOOLS = ("memcheck", "racecheck")
# Probes whose failures evidence.py never makes a P0 (a bfloat16 drift, an unjudged overflow): not rerun.
WEAK_PROBES = ("dtype", "magnitude")


def find() -> str | None:
    """compute-sanitizer on PATH, else in $CUDA_HOME/bin or /usr/local/cuda/bin; None when absent. The toolkit's
    bin/compute-sanitizer leads (a link, or a script on some installs) to its compute-sanitizer/ directory: the
    program there is the one returned when it exists, since a confined worker may run no shell."""
    found = shutil.which("compute-sanitizer")
    candidates = [Path(found)] if found else []
    candidates += [Path(base) / "bin" / "compute-sanitizer" for base in sandbox.cuda_roots()]
    for p in candidates:
        if p.is_file() and os.access(p, os.X_OK):
            real = Path(os.path.realpath(p))
            beside = real.parent.parent / "compute-sanitizer" / "compute-sanitizer"
            return str(beside if real.parent.name == "bin" and beside.is_file() else real)
    return None


def variants(probes: list[dict[str, Any]], suspect_probes: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The variants worth a sanitizer run, "PROBE: LABEL" as --only takes them: the example call, each failing
    variant that can be a P0, then every variant of the probes a static memory suspect names (a tail the GPU ran
    without a visible error may still read past its tensor); at most MAX_VARIANTS."""
    out = [EXAMPLE]
    for p in probes:
        if p.get("name") in WEAK_PROBES:
            continue
        out += [f"{p['name']}: {r['variant']}" for r in p.get("failures", []) if r.get("variant")]
    for p in probes:
        if p.get("name") in suspect_probes and p.get("name") != "example":
            out += [f"{p['name']}: {label}" for label in p.get("ran", [])]
    seen: set[str] = set()
    return [v for v in out if not (v in seen or seen.add(v))][:MAX_VARIANTS]


def command(tool: str, exe: str, args: dict[str, Any], chosen: list[str]) -> list[str]:
    """The child's command line (the probes' reproducer CLI under the sanitizer). The sanitizer writes its reports
    to the child's stdout, where the child's marks are: in launch order, so each error follows its variant's mark."""
    ports = sandbox.STATE.tcp_ports  # a confined worker: the only ports its ruleset lets the two talk over
    cmd = [exe, "--tool", tool, "--print-limit", str(PRINT_LIMIT)]
    cmd += ["--port", str(ports[0]), "--max-connections", str(len(ports))] if ports else []
    example = ["--caller-request", str(args["caller_request"])] if args.get("caller_request") else \
        ["--harness", str(args["harness"])]
    cmd += [sys.executable, "-m", "pytorch_to_triton.worker.probe.rerun", str(args["target"]), *example, "--mark"]
    if args.get("entry"):
        cmd += ["--entry", str(args["entry"])]
    if args.get("shape") is not None:
        cmd += ["--shape", json.dumps(args["shape"], separators=(",", ":"))]
    if args.get("dtype"):
        cmd += ["--dtype", str(args["dtype"])]
    for v in chosen:
        cmd += ["--only", v]
    return cmd


def child_env() -> dict[str, str]:
    """Each tensor its own allocation (the caching allocator's blocks hide over-reads), line info in the cubins:
    Triton's default, so TRITON_DISABLE_LINE_INFO is dropped rather than set (a value in the environment is part of
    the compile cache's key: the child then reuses the cubins the probes just built)."""
    env = {**os.environ, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1", "PYTHONUNBUFFERED": "1", "TRITON_INTERPRET": "0"}
    env.pop("TRITON_DISABLE_LINE_INFO", None)
    return env


def run(args: dict[str, Any], chosen: list[str], budget_s: float, exe: str | None = None,
        tools: tuple[str, ...] = TOOLS) -> dict[str, Any]:
    """memcheck over `chosen`, racecheck over the example call; one child each, within `budget_s` in all."""
    exe = exe or find()
    if exe is None:
        return {"not_run": "compute-sanitizer not found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)", "runs": []}
    if sandbox.STATE.enabled and not sandbox.STATE.tcp_ports:
        return {"not_run": "the worker is confined and its ruleset does not let compute-sanitizer's target start "
                           "(it writes its own /proc entries and talks to the sanitizer over TCP); run the audit "
                           "with P2T_SANDBOX_PROC=sanitizer (makes /proc readable inside the sandbox) or "
                           "--no-sandbox", "runs": []}
    runs = []
    deadline = time.monotonic() + budget_s
    with caller_file(args) as args:
        for tool in tools:
            left = deadline - time.monotonic()
            todo = chosen if tool == "memcheck" else [EXAMPLE]
            if left < 10:
                runs.append({"tool": tool, "variants": todo, "not_run": "the audit's time budget was spent"})
                continue
            runs.append(_one(tool, exe, args, todo, left if tool == tools[-1] else 0.7 * left))
    return {"path": exe, "runs": runs}


@contextlib.contextmanager
def caller_file(args: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """`args` with `caller_request`: a JSON file holding the worker's `caller` argument narrowed to the caller that
    gave the example (`caller_spec`), removed afterwards; `args` as given when a harness gave the example. A file,
    not an argument: a caller's code travels in it, and one argument may hold at most 128 KiB (Linux)."""
    if not (args.get("caller") and args.get("caller_spec")):
        yield args
        return
    req = {**args["caller"], "sources": [s for s in args["caller"].get("sources") or []
                                         if s.get("spec") == args["caller_spec"]]}
    fd, path = tempfile.mkstemp(prefix="p2t-caller-", suffix=".json")  # the scratch directory when confined
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(req, f)
        yield {**args, "caller_request": path}
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _one(tool: str, exe: str, args: dict[str, Any], chosen: list[str], timeout_s: float) -> dict[str, Any]:
    t0 = time.monotonic()
    try:  # its own process group: on a timeout the sanitizer and the python under it go together
        proc = subprocess.Popen(command(tool, exe, args, chosen), env=child_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, errors="replace",
                                start_new_session=True)
    except OSError as e:
        return {"tool": tool, "variants": chosen, "not_run": f"could not start {exe}: {e}"}
    try:
        out, _ = proc.communicate(timeout=timeout_s)
        rc, timed_out = proc.returncode, False
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        rc, timed_out = -1, True
    parsed = parse(out)
    rec = {"tool": tool, "variants": chosen, "seconds": round(time.monotonic() - t0, 1), "rc": rc,
           "timed_out": timed_out, **parsed}
    if timed_out:
        rec["not_run"] = f"timed out after {timeout_s:.0f} s (the variants it reached: {', '.join(parsed['ran'])})"
    elif parsed["summary"] is None and not parsed["errors"]:
        said = parsed["messages"] or out.strip().splitlines()[-4:]
        rec["not_run"] = f"no sanitizer summary (rc {rc}): {' | '.join(m.strip() for m in said)[:300]}"
    return rec


_HEAD = re.compile(r"^=+ (?:(?:Error|ERROR|Warning|WARNING): )?(?P<what>\S.*?)\s*$")
_AT = [re.compile(r"\bat (?P<kernel>[\w$.<>:~]+)\+(?P<pc>0x[0-9a-fA-F]+) in (?P<file>.+?):(?P<line>\d+)"),
       re.compile(r"\bat (?P<pc>0x[0-9a-fA-F]+) in (?P<file>.+?):(?P<line>\d+):(?P<kernel>\S+)"),
       re.compile(r"\bat (?P<kernel>[\w$.<>:~]+)\+(?P<pc>0x[0-9a-fA-F]+)"),
       re.compile(r"\bat (?P<pc>0x[0-9a-fA-F]+) in (?P<kernel>[\w$.<>:~]+)")]
_THREAD = re.compile(r"by thread (?P<thread>\([\d, ]+\)) in block (?P<block>\([\d, ]+\))")
_SUMMARY = re.compile(r"(?:ERROR|RACECHECK|INITCHECK|SYNCCHECK) SUMMARY: .*")
_SKIP = ("COMPUTE-SANITIZER", "Saved host backtrace", "Host Frame", "Device Frame", "=========")


def _locate(cur: dict[str, Any], text: str) -> None:
    """The first `at KERNEL+PC in FILE:LINE` (or an older form) of an error: where it happened."""
    if cur.get("kernel") and cur.get("file"):
        return
    for pat in _AT:
        a = pat.search(text)
        if a:
            g = a.groupdict()
            if not cur.get("kernel"):
                cur["kernel"] = g.get("kernel")
            cur.setdefault("pc", g.get("pc"))
            if g.get("file") and not cur.get("file"):
                cur["file"], cur["line"] = g["file"].strip(), int(g["line"])
            return


def parse(text: str) -> dict[str, Any]:
    """The sanitizer's report as records: each distinct error (what, kernel, file, line, the first thread and block,
    the address note, how many times) with the variant that ran it; the summary line; the variants seen; the
    tool's other messages (no kernel named: its own failures, API errors that follow a kernel's)."""
    errors: dict[tuple[Any, ...], dict[str, Any]] = {}
    order: list[tuple[Any, ...]] = []
    summary = None
    ran: list[str] = []
    messages: list[str] = []
    variant = ""
    cur: dict[str, Any] | None = None

    def close() -> None:
        nonlocal cur
        if cur is None:
            return
        if not cur.get("kernel"):  # the tool's own messages, or an API error that follows a kernel's: no place
            messages.append(cur["what"])
            cur = None
            return
        key = (cur["variant"], cur["what"], cur.get("kernel"), cur.get("file"), cur.get("line"))
        if key in errors:
            errors[key]["count"] += 1
        else:
            errors[key] = {**cur, "count": 1}
            order.append(key)
        cur = None

    for raw in text.splitlines():
        line = raw.rstrip()
        if line.startswith(MARK):
            close()
            variant = line.split(MARK, 1)[1].strip()
            ran.append(variant)
            continue
        if not line.startswith("========="):
            continue
        body = line.lstrip("=")
        m = _SUMMARY.search(body)
        if m:
            close()
            summary = m.group(0).strip()
            continue
        indented = body.startswith("     ")
        if not indented:
            close()
            h = _HEAD.match(line)
            what = h.group("what") if h else body.strip()
            if not what or what.startswith(_SKIP):
                continue
            cur = {"variant": variant, "what": what}
            _locate(cur, what)  # racecheck names the first access's place in its header line
            continue
        if cur is None:
            continue
        detail = body.strip()
        if detail.startswith(_SKIP):
            continue
        _locate(cur, detail)
        t = _THREAD.search(detail)
        if t and "thread" not in cur:
            cur["thread"], cur["block"] = t.group("thread"), t.group("block")
        if re.search(r"out of bounds|bytes (after|before)|nearest allocation|misaligned|and .* access at", detail,
                     re.I):
            cur["detail"] = f"{cur.get('detail', '')}; {detail}".strip("; ")[:300]
    close()
    return {"errors": [errors[k] for k in order], "summary": summary, "ran": ran, "messages": messages[:10]}
