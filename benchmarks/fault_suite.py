"""Fault suite: every fault and bad input of tests/test_faults.py through one Service, with recovery times.

    python benchmarks/fault_suite.py --out DIR [--only segfault,fork_bomb] [--hang-timeout 10] [--budget S]

Per entry: a warm worker, the fault (or bad input), what came back and when, then a known-good validation: "recovery"
is the time from the fault's report to that next correct answer. CUDA faults run on the GPU when one is visible;
on a CPU the same files run under Triton's interpreter. Writes DIR/fault_suite.json and fault_suite.md (printed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from pytorch_to_triton.errors import P2TError, UsageError, WorkerError  # noqa: E402
from pytorch_to_triton.service import Service  # noqa: E402
from pytorch_to_triton.worker_client import Limits  # noqa: E402
from pytorch_to_triton.workspace import MAX_SOURCE_BYTES  # noqa: E402

FAULTS = ROOT / "tests" / "faults"
KW = {"trials": 1, "only_cases": ["odd_7"], "noncontiguous": False}
MAX_PROCESSES = 32  # the worker's process limit (the fork bomb's)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@dataclass
class Entry:
    name: str
    category: str  # fault | cuda | bad_input | concurrency
    what: str
    expect: dict[str, list[str]]  # device kind ("cpu"/"cuda") -> acceptable results
    run: Callable[[Service, Path, argparse.Namespace], dict[str, Any]]
    devices: tuple[str, ...] = ("cpu", "cuda")


@dataclass
class Ctx:
    device: str = "cpu"
    memory: int = 0


CTX = Ctx()


def _pid(svc: Service) -> int | None:
    proc = svc.pool.slots[0].proc
    return proc.pid if proc is not None and proc.poll() is None else None


def _good(svc: Service) -> bool:
    return svc.validate(reference="reference.py", candidates=["good.py"], **KW).ok


def _candidate(name: str, timeout: str = "default") -> Callable[[Service, Path, argparse.Namespace], dict[str, Any]]:
    def run(svc: Service, ws: Path, args: argparse.Namespace) -> dict[str, Any]:
        t = {"default": 120.0, "hang": args.hang_timeout, "long": 120.0}[timeout]
        rep = svc.validate(reference="reference.py", candidates=[f"{name}.py"], timeout_s=t, **KW)
        cand = rep.candidates[0]
        f = next((f for f in cand.findings if f.severity == "fail"), None)
        if rep.ok or f is None:
            return {"result": "pass", "message": rep.summary}
        where = (cand.error or {}).get("file") and f"{cand.error['file']}:{cand.error['line']}"
        if not where and isinstance(f.evidence, dict) and f.evidence.get("line"):
            where = f"{Path(str(f.evidence.get('file'))).name}:{f.evidence['line']}"
        return {"result": f.check, "message": f.message, "location": where or None}

    return run


CRASH_BUDGET_S = 10.0  # issue 47: a crashing candidate costs at most this beyond its own timeout


def _every_case(name: str, hang: bool = False) -> Callable[[Service, Path, argparse.Namespace], dict[str, Any]]:
    """A candidate that faults on every call, validated with the default cases and trials (16 case runs): what an
    assistant's crashing candidate costs (issue 47: 35-40 s per validation when every case cost a fresh worker).
    `cost_s` = the report's time beyond the call's own timeout (hang) or the whole report (crash)."""

    def run(svc: Service, ws: Path, args: argparse.Namespace) -> dict[str, Any]:
        t = args.hang_timeout if hang else 120.0
        t0 = time.monotonic()
        rep = svc.validate(reference="reference.py", candidates=[f"{name}.py"], timeout_s=t)
        spent = time.monotonic() - t0
        cand = rep.candidates[0]
        f = next((f for f in cand.findings if f.severity == "fail"), None)
        return {"result": f.check if f is not None and not rep.ok else "pass", "message": f.message if f else rep.summary,
                "timeout_s": t if hang else None, "cost_s": round(spent - (t if hang else 0.0), 3),
                "replacements": len(cand.worker_replacements or []), "acceptance": "crash_cost"}

    return run


def _contained(cands: list[str], reference: str, case: str, *, reference_fault: bool = False
               ) -> Callable[[Service, Path, argparse.Namespace], dict[str, Any]]:
    """A fault in one case only (issue 25): 'contained' when that case alone is marked (the candidate's failure, or
    for a reference fault a skipped case with no candidate blamed), every other case ran, and the good candidate
    after it passed in the same call."""

    def run(svc: Service, ws: Path, args: argparse.Namespace) -> dict[str, Any]:
        rep = svc.validate(reference=reference, candidates=cands, trials=1, noncontiguous=False, timeout_s=300)
        first, last = rep.candidates[0], rep.candidates[-1]
        others_ok = all(c.ok for c in first.cases if c.name != case)
        planted = [c for c in first.cases if c.name == case]
        if reference_fault:
            ok = rep.ok and bool(planted) and all(c.skipped for c in planted)
        else:
            ok = not first.ok and bool(planted) and not planted[0].ok and others_ok and last.ok
        f = next((f for f in first.findings if f.severity == "fail"), None)
        if rep.ok and not reference_fault:  # the fault did not fire (the interpreter skips tl.device_assert)
            return {"result": "pass", "message": rep.summary}
        return {"result": "contained" if ok else "not contained",
                "message": (f"{f.check} ({f.case}): {f.message}" if f else "; ".join(first.notes[:2])) if ok
                else rep.summary, "cases": [(c.name, c.ok) for c in first.cases],
                "replacements": first.worker_replacements}

    return run


def _bad(kwargs: dict[str, Any] | Callable[[Path], dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def run(svc: Service, ws: Path, args: argparse.Namespace) -> dict[str, Any]:
        kw = kwargs(ws) if callable(kwargs) else kwargs
        try:
            rep = svc.validate(**{"reference": "reference.py", "trials": 1, **kw})
        except UsageError as e:
            return {"result": "UsageError", "message": str(e)}
        return {"result": "pass" if rep.ok else "fail", "message": rep.summary}

    return run


def _setup_bad(ws: Path) -> None:
    outside = ws.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "evil.py").write_text("def reference(x, y):\n    return x + y\n")
    (ws / "latin.py").write_bytes(b"# caf\xe9\nx = 1\n")
    (ws / "big.py").write_text("#" * MAX_SOURCE_BYTES + "\n")
    (ws / "notes.txt").write_text("not python\n")
    for link, target in (("link.py", outside / "evil.py"), ("linkdir", outside)):
        if not (ws / link).is_symlink():
            os.symlink(target, ws / link)
    (ws / "wrong.py").write_text((ws / "good.py").read_text().replace("x + y", "x - y"))


def _cancel(svc: Service, ws: Path, args: argparse.Namespace) -> dict[str, Any]:
    cancel, running = threading.Event(), threading.Event()
    out: dict[str, Any] = {}

    def call() -> None:
        try:
            svc.validate(reference="reference.py", candidates=["cancel_me.py"], timeout_s=600, cancel=cancel,
                         on_event=lambda m, p, t: running.set() if "cancel_me" in m else None, **KW)
            out["result"] = "not cancelled"
        except WorkerError as e:
            out.update(result=e.kind, message=str(e))
        out["t"] = time.monotonic()

    th = threading.Thread(target=call)
    th.start()
    running.wait(120)
    time.sleep(1.0)
    t0 = time.monotonic()
    cancel.set()
    th.join(60)
    out["cancel_latency_s"] = round(out.get("t", time.monotonic()) - t0, 3)
    out.pop("t", None)
    return out


_LOGGED = '''
import os as _os
import time as _time

from {base} import reference as _inner

_LOG = _os.path.join(_os.environ.get("P2T_SANDBOX_WRITABLE", ".").split(_os.pathsep)[0], "intervals.log")

def reference(x, y):
    with open(_LOG, "a") as f:
        f.write(f"{name} start {{_time.monotonic()}}\\n")
    _time.sleep(0.1)
    out = _inner(x, y)
    with open(_LOG, "a") as f:
        f.write(f"{name} end {{_time.monotonic()}}\\n")
    return out
'''


def _concurrent(svc: Service, ws: Path, args: argparse.Namespace) -> dict[str, Any]:
    (ws / "wrong.py").write_text((ws / "good.py").read_text().replace("x + y", "x - y"))
    (ws / "conc_a.py").write_text(_LOGGED.format(base="good", name="A"))
    (ws / "conc_b.py").write_text(_LOGGED.format(base="wrong", name="B"))
    (ws / "outbox" / "intervals.log").unlink(missing_ok=True)
    reps: dict[str, Any] = {}

    def run(n: str) -> None:
        reps[n] = svc.validate(reference="reference.py", candidates=[f"conc_{n}.py"], trials=2)

    threads = [threading.Thread(target=run, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)
    events = sorted((line.split() for line in (ws / "outbox" / "intervals.log").read_text().splitlines()),
                    key=lambda e: float(e[2]))
    sequential = all(events[i][1] == "start" and events[i + 1][1] == "end" and events[i][0] == events[i + 1][0]
                     for i in range(0, len(events) - 1, 2))
    attributed = reps["a"].ok and not reps["b"].ok and reps["b"].candidates[0].candidate == "conc_b.py"
    ok = sequential and attributed
    return {"result": "queued" if ok else "interleaved", "message": f"{len(events) // 2} candidate calls; "
            f"sequential={sequential}, reports attributed correctly={attributed}"}


def entries() -> list[Entry]:
    def exp(*kinds: str, cuda: tuple[str, ...] | None = None) -> dict[str, list[str]]:
        return {"cpu": list(kinds), "cuda": list(cuda if cuda is not None else kinds)}

    usage = exp("UsageError")
    return [
        Entry("host_loop", "fault", "endless host loop after starting a child, a setsid child and a daemon",
              exp("timeout"), _candidate("host_loop", "hang")),
        Entry("kernel_loop", "fault", "a Triton kernel spinning on a flag that is never cleared",
              exp("timeout"), _candidate("kernel_loop", "hang")),
        Entry("compile_hang_heuristic", "fault", "@triton.heuristics rule that loops forever (before compiling)",
              exp("timeout"), _candidate("heuristic_hang", "hang")),
        Entry("compile_hang_static_range", "fault", "tl.static_range(2**24) unroll (GPU: the compiler never ends)",
              exp("timeout"), _candidate("static_range_hang", "hang")),
        Entry("memory_blowup", "fault", "host memory grows 256 MiB a step", exp("memory_limit", "exception"),
              _candidate("memory_blowup", "long")),
        Entry("huge_alloc", "fault", "one 1 TiB host allocation", exp("exception", "memory_limit"),
              _candidate("huge_alloc")),
        Entry("segfault", "fault", "ctypes.string_at(0)", exp("crashed"), _candidate("segfault")),
        Entry("os_exit", "fault", "os._exit(3) in user code", exp("crashed"), _candidate("os_exit")),
        Entry("os_exit_every_case", "fault", "os._exit(3) on every call, default cases and trials (16 case runs)",
              exp("crashed"), _every_case("os_exit")),
        Entry("segfault_every_case", "fault", "ctypes.string_at(0) on every call, default cases and trials",
              exp("crashed"), _every_case("segfault")),
        Entry("hang_every_case", "fault", "an endless host loop on every call, default cases, timeout_s=--hang-timeout",
              exp("timeout"), _every_case("host_loop", hang=True)),
        Entry("fork_bomb", "fault", "bounded fork bomb (up to 512 processes)", exp("process_limit"),
              _candidate("fork_bomb", "long")),
        Entry("output_flood", "fault", "~6 MiB per call on stdout/stderr (Python and raw fds), correct result",
              exp("pass"), _candidate("flood")),
        Entry("recursion_error", "fault", "unbounded Python recursion", exp("exception"), _candidate("recursion")),
        Entry("c_stack_overflow", "fault", "setrecursionlimit(10**7) + json.dumps of a 10**6-deep list",
              exp("crashed", "memory_limit", "exception"), _candidate("stack_overflow", "long")),
        # On a GPU the illegal address poisons the CUDA context: since issue 25 the validator names that case
        # `cuda_fatal` (worker/validation/case_log.py), as it does for a device assert; `exception` would be a misread.
        Entry("kernel_oob_load", "cuda", "kernel load 2**40 elements past the input (illegal address)",
              exp("crashed", cuda=("cuda_fatal", "crashed")), _candidate("cuda_illegal")),
        Entry("device_assert", "cuda", "tl.device_assert that always fires (debug=True)",
              exp("mismatch", "exception", "crashed", cuda=("exception", "crashed", "cuda_fatal")),
              _candidate("cuda_assert")),
        Entry("device_oom", "cuda", "torch.empty of 32 TiB on the inputs' device", exp("exception"),
              _candidate("cuda_oom")),
        Entry("crash_in_one_case", "fault", "os._exit in the candidate on one case of three, then a good candidate",
              exp("contained"), _contained(["crash_on_odd.py", "good.py"], "reference.py", "odd_7")),
        Entry("reference_crash_in_one_case", "fault", "os._exit in the reference on one case, two candidates",
              exp("contained"), _contained(["good.py", "crash_on_odd.py"], "reference_crash_on_odd.py", "odd_7",
                                           reference_fault=True)),
        Entry("device_assert_in_one_case", "cuda", "tl.device_assert firing on one case (candidate), then a good one",
              exp("pass", cuda=("contained",)), _contained(["cuda_assert_on_odd.py", "good.py"], "reference.py", "odd_7")),
        Entry("reference_device_assert", "cuda", "F.cross_entropy in the reference with targets out of range on one "
              "case", exp("UsageError", cuda=("contained",)), _contained(["cross_entropy_good.py"],
                                                                        "cross_entropy_reference.py", "odd_7",
                                                                        reference_fault=True)),
        Entry("cancel", "concurrency", "cancel a running call (Service.validate cancel=Event)", exp("cancelled"),
              _cancel),
        Entry("two_calls_at_once", "concurrency", "two threads validate different candidates at once",
              exp("queued"), _concurrent),
        Entry("missing_file", "bad_input", "reference that does not exist", usage,
              _bad({"reference": "nope.py", "candidates": ["good.py"]})),
        Entry("dotdot_escape", "bad_input", "candidate ../outside/evil.py", usage,
              _bad({"candidates": ["../outside/evil.py"]})),
        Entry("symlink_escape", "bad_input", "candidate link.py -> outside/evil.py", usage,
              _bad({"candidates": ["link.py"]})),
        Entry("symlink_dir_escape", "bad_input", "candidate linkdir/evil.py, linkdir -> outside", usage,
              _bad({"candidates": ["linkdir/evil.py"]})),
        Entry("wrong_entry", "bad_input", "candidate_entry that does not exist", usage,
              _bad({"candidates": ["good.py"], "candidate_entry": "nope"})),
        Entry("signature_mismatch", "bad_input", "candidate(x) against reference(x, y)", usage,
              _bad({"candidates": ["sig_mismatch.py"]})),
        Entry("reference_rejects_inputs", "bad_input", "make_inputs builds inputs the reference raises on", usage,
              _bad({"reference": "rejecting_reference.py", "candidates": ["good.py"]})),
        Entry("unknown_dtype", "bad_input", "dtypes=['float17']", usage,
              _bad({"candidates": ["good.py"], "dtypes": ["float17"]})),
        Entry("case_beyond_memory", "bad_input", "a case of 2**40 elements (refused from the size estimate)", usage,
              _bad({"candidates": ["good.py"], "cases": [{"name": "huge", "shape": [1 << 40]}],
                    "only_cases": ["huge"]})),
        Entry("case_beyond_worker_limit", "bad_input", "a case that fits the machine but not the worker's limit",
              usage, _bad(lambda ws: {"candidates": ["good.py"], "only_cases": ["big"],
                                      "cases": [{"name": "big", "shape": [max(CTX.memory // 16, 1 << 20)]}]}),
              devices=("cpu",)),
        Entry("non_utf8_source", "bad_input", "a Latin-1 source file", usage, _bad({"candidates": ["latin.py"]})),
        Entry("non_utf8_inline", "bad_input", "inline code with a lone surrogate", usage,
              _bad({"candidate_code": "x = '\udcff'\n"})),
        Entry("huge_source", "bad_input", "a 1 MiB + 1 byte source file", usage, _bad({"candidates": ["big.py"]})),
        Entry("huge_inline", "bad_input", "2 MiB of inline code", usage,
              _bad({"candidate_code": "#" * (2 * MAX_SOURCE_BYTES)})),
    ]


def _versions(svc: Service) -> dict[str, Any]:
    rep = svc.validate(reference="reference.py", candidates=["good.py"], **KW)
    return {k: rep.runtime.get(k) for k in ("device", "interpreter", "torch", "triton", "gpu", "python", "cuda", "sandbox")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="directory for fault_suite.json and fault_suite.md")
    ap.add_argument("--hang-timeout", type=float, default=10.0, help="timeout_s of the hang cases (default 10)")
    ap.add_argument("--only", default="", help="comma-separated entry names")
    ap.add_argument("--budget", type=float, default=0.0,
                    help="seconds after which no entry starts (0: none); the rest are listed as not run. Each entry "
                         "then ends within its own limits, so a hard limit of budget + 30 s keeps the whole record")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ws_parent = Path(tempfile.mkdtemp(prefix="p2t-fault-suite-"))
    ws = ws_parent / "ws"
    ws.mkdir()
    for f in FAULTS.glob("*.py"):
        shutil.copy(f, ws / f.name)
    _setup_bad(ws)
    (ws / "outbox").mkdir()  # the workspace is read-only to the sandboxed worker; fixtures log here
    os.environ["P2T_SANDBOX_WRITABLE"] = str(ws / "outbox")
    has_gpu = Path("/dev/nvidiactl").exists() and shutil.which("nvidia-smi") is not None
    gib = 16.0 if has_gpu else 1.0  # the worker's host-memory limit
    CTX.memory = int(gib * 2**30)
    svc = Service(ws, limits=Limits(memory_bytes=CTX.memory, max_processes=MAX_PROCESSES))
    CTX.device = "cuda" if svc.pool.slots[0].name.startswith("cuda") else "cpu"
    rows: list[dict[str, Any]] = []
    not_run: list[str] = []
    start = time.monotonic()
    data: dict[str, Any] = {}
    try:
        t0 = time.monotonic()
        assert _good(svc), "the known-good candidate fails: fix the setup first"
        cold = time.monotonic() - t0
        t0 = time.monotonic()
        _good(svc)
        warm = time.monotonic() - t0
        env = _versions(svc)
        log(f"device {CTX.device}, cold start {cold:.1f} s, warm call {warm:.2f} s, {env}")
        only = {s.strip() for s in args.only.split(",") if s.strip()}
        data = {"date": time.strftime("%Y-%m-%d %H:%M:%S %z"), "host": socket.gethostname(),
                "platform": platform.platform(), "cpus": os.cpu_count(), "device": CTX.device, "runtime": env,
                "memory_limit_gib": gib, "max_processes": MAX_PROCESSES, "hang_timeout_s": args.hang_timeout,
                "cold_start_s": round(cold, 3), "warm_call_s": round(warm, 3), "budget_s": args.budget,
                "entries": rows, "not_run": not_run}
        for e in entries():
            if (only and e.name not in only) or CTX.device not in e.devices:
                continue
            if args.budget and time.monotonic() - start > args.budget:
                not_run.append(e.name)
                continue
            if not _good(svc):
                log(f"{e.name}: the warm-up call failed; skipped")
                continue
            pid0 = _pid(svc)
            t0 = time.monotonic()
            try:
                res = e.run(svc, ws, args)
            except P2TError as err:
                res = {"result": type(err).__name__, "message": str(err)}
            except Exception as err:  # noqa: BLE001 - a broken entry must not end the suite
                res = {"result": f"harness error {type(err).__name__}", "message": str(err)}
            t1 = time.monotonic()
            pid1 = _pid(svc)
            try:
                nxt = svc.validate(reference="reference.py", candidates=["good.py"], **KW)
                next_ok = nxt.ok
                if not next_ok:  # why the follow-up failed, so the recovery itself can be read (issue 25)
                    res["next_error"] = nxt.summary[:800]
            except P2TError as err:
                next_ok, res["next_error"] = False, str(err)
            t2 = time.monotonic()
            row = {"name": e.name, "category": e.category, "what": e.what, "expected": e.expect[CTX.device],
                   **res, "message": str(res.get("message", ""))[:400],
                   "as_expected": res.get("result") in e.expect[CTX.device],
                   "report_s": round(t1 - t0, 3), "recovery_s": round(t2 - t1, 3), "next_call_ok": next_ok,
                   "worker_restarted": pid1 is None or pid1 != pid0}
            rows.append(row)
            log(f"{e.name:28s} {row['result']:14s} report {row['report_s']:6.2f} s  recovery {row['recovery_s']:6.2f} s"
                f"  {'ok' if row['as_expected'] and next_ok else 'UNEXPECTED'}")
            _write(out, data, time.monotonic() - start)  # after every entry: a run killed from outside keeps its record
    finally:
        svc.close()
        shutil.rmtree(ws_parent, ignore_errors=True)
    md = _write(out, data, time.monotonic() - start)
    print(md)
    bad = [r["name"] for r in rows if not (r["as_expected"] and r["next_call_ok"])]
    if bad:
        log(f"unexpected: {', '.join(bad)}")
    if not_run:
        log(f"not run (past --budget {args.budget:g} s): {', '.join(not_run)}")
    return 1 if bad else 0


def _write(out: Path, data: dict[str, Any], wall_s: float) -> str:
    """fault_suite.json and fault_suite.md as they stand; returns the markdown."""
    data["wall_s"] = round(wall_s, 1)
    (out / "fault_suite.json").write_text(json.dumps(data, indent=2, default=str))
    md = render(data)
    (out / "fault_suite.md").write_text(md)
    return md


def render(data: dict[str, Any]) -> str:
    rt = data["runtime"]
    lines = [
        f"# Fault suite: {data['device']} ({rt.get('gpu') or 'Triton interpreter'})", "",
        f"{data['date']} on {data['host']} ({data['cpus']} CPUs), torch {rt.get('torch')}, triton {rt.get('triton')}, "
        f"Python {rt.get('python')}. Worker limits: {data['memory_limit_gib']:g} GiB host memory, "
        f"{data['max_processes']} processes; hang cases use timeout_s={data['hang_timeout_s']:g}. "
        f"Cold worker start {data['cold_start_s']:.1f} s, warm call {data['warm_call_s']:.2f} s. "
        f"Whole suite {data.get('wall_s', 0):.0f} s" + (f" (budget {data['budget_s']:g} s)" if data.get("budget_s")
                                                       else "") + ".", "",
        "recovery = time from the fault's report to the next correct answer of the same Service.", "",
        "| entry | what | result | expected | report (s) | recovery (s) | worker restarted | next call |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in data["entries"]:
        mark = "" if r["as_expected"] else " ⚠"
        where = f" at {r['location']}" if r.get("location") else ""
        extra = f", cancel latency {r['cancel_latency_s']:.2f} s" if "cancel_latency_s" in r else ""
        lines.append(f"| {r['name']} | {r['what']} | {r['result']}{where}{extra}{mark} | {' / '.join(r['expected'])} | "
                     f"{r['report_s']:.2f} | {r['recovery_s']:.2f} | {'yes' if r['worker_restarted'] else 'no'} | "
                     f"{'ok' if r['next_call_ok'] else 'FAILED'} |")
    crash_rows = [r for r in data["entries"] if r.get("acceptance") == "crash_cost"]
    if crash_rows:
        lines += ["", f"Crash cost (issue 47: <= {CRASH_BUDGET_S:g} s beyond the call's own timeout, the next call "
                  "unaffected; next = the following correct call's time):", ""]
        for r in crash_rows:
            ok = r.get("cost_s") is not None and r["cost_s"] <= CRASH_BUDGET_S and r["next_call_ok"]
            lines.append(f"acceptance: crash cost {r['name']}: {r.get('cost_s', float('nan')):.2f} s beyond its timeout "
                         f"(report {r['report_s']:.2f} s" + (f", timeout_s {r['timeout_s']:g}" if r.get("timeout_s") else "")
                         + f", {r.get('replacements', 0)} worker replacement(s)), next call "
                         f"{'ok' if r['next_call_ok'] else 'FAILED'} in {r['recovery_s']:.2f} s: {'PASS' if ok else 'FAIL'}")
    bad = [r["name"] for r in data["entries"] if not (r["as_expected"] and r["next_call_ok"])]
    lines += ["", f"UNEXPECTED: {len(bad)}" + (f" ({', '.join(bad)})" if bad else "") + f"; not run (budget): "
              f"{len(data.get('not_run') or [])}" + (f" ({', '.join(data['not_run'])})" if data.get("not_run") else "")]
    lines += ["", "Messages:", ""]
    for r in data["entries"]:
        msg = " ".join(str(r.get("message", "")).split())[:300].replace("|", "\\|")
        lines.append(f"- **{r['name']}**: {msg}")
        if r.get("next_error"):
            nxt = " ".join(str(r["next_error"]).split())[:400].replace("|", "\\|")
            lines.append(f"  - next call failed: {nxt}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
