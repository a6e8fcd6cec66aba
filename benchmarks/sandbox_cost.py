"""What the worker sandbox (worker/confine/sandbox.py, sandbox_host.py) costs, and whether it contains the hostile corpus.

    python benchmarks/sandbox_cost.py [--no-corpus]     # JSON printed last (and to $OUT/sandbox_cost.json with OUT set)
    python benchmarks/sandbox_cost.py --corpus-only     # the hostile corpus alone: $OUT/sandbox_corpus.json
    python benchmarks/sandbox_cost.py --acceptance DIR  # issue 37's list, read from PART=sandbox's folder

Sandbox on and off through a real Service: the first call, a warm `ping` and a warm validation of tests/faults/good.py;
the sandbox's own per-call work timed alone; on a GPU, run_benchmark with torch.compile and a compiled audit confined;
then, unless --no-corpus, tests/test_sandbox.py (the hostile corpus through the real CLI and MCP client). Target: the
sandbox's own work and the warm ping overhead under 5 ms. Logs go to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))
os.environ.setdefault("P2T_SPARE_WORKER", "0")  # one worker per Service: the spare's start-up would add noise

from pytorch_to_triton.service import Service  # noqa: E402
from pytorch_to_triton.worker_client import Limits  # noqa: E402

FAULTS = ROOT / "tests" / "faults"
KW: dict[str, Any] = {"trials": 1, "only_cases": ["odd_7"], "noncontiguous": False}


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _workspace() -> Path:
    ws = Path(tempfile.mkdtemp(prefix="p2t-sandbox-cost-")) / "ws"
    ws.mkdir()
    for name in ("reference.py", "good.py"):
        shutil.copy(FAULTS / name, ws / name)
    return ws


def _measure(sandbox: bool, pings: int, calls: int) -> dict[str, Any]:
    ws = _workspace()
    t0 = time.perf_counter()
    svc = Service(ws, limits=Limits(sandbox=sandbox))
    try:
        rep = svc.validate(reference="reference.py", candidates=["good.py"], **KW)
        first_s = time.perf_counter() - t0
        runtime = dict(rep.runtime or {})
        if not rep.ok:  # recorded, not raised: the rest of the run (toolchain, corpus) still says what it can
            return {"sandbox": runtime.get("sandbox"), "error": rep.summary[:2000]}
        ping_ms = []
        for _ in range(pings):
            t = time.perf_counter()
            svc.pool.call("ping", {}, timeout_s=60)
            ping_ms.append((time.perf_counter() - t) * 1e3)
        call_ms = []
        for _ in range(calls):
            t = time.perf_counter()
            r = svc.validate(reference="reference.py", candidates=["good.py"], **KW)
            call_ms.append((time.perf_counter() - t) * 1e3)
            if not r.ok:
                return {"sandbox": runtime.get("sandbox"), "error": r.summary[:2000]}
    finally:
        svc.close()
        shutil.rmtree(ws.parent, ignore_errors=True)
    return {"sandbox": runtime.get("sandbox"), "device": runtime.get("worker_device") or runtime.get("device"),
            "gpu": runtime.get("gpu"), "first_call_s": round(first_s, 3),
            "warm_ping_ms": {"median": round(statistics.median(ping_ms), 3), "p10": round(_q(ping_ms, 0.1), 3),
                             "p90": round(_q(ping_ms, 0.9), 3), "n": pings},
            "warm_call_ms": {"median": round(statistics.median(call_ms), 2), "p10": round(_q(call_ms, 0.1), 2),
                             "p90": round(_q(call_ms, 0.9), 2), "n": calls}}


_NAN_ROUND: dict[str, Any] = {"sandbox": None, "first_call_s": float("nan"), "warm_ping_ms": {"median": float("nan")},
                               "warm_call_ms": {"median": float("nan")}}


def _parts(n: int = 500) -> dict[str, float]:
    """The sandbox's own per-call work, timed alone (median ms): the worker's begin_call + end_call (fresh scratch
    directory, CPU budget, clean-up; run here on a temp dir, the same code) and the server's after_call + free-space
    check against a live worker (the leftover-process sweep over /proc and the scratch clean-up)."""
    from pytorch_to_triton import sandbox_host
    from pytorch_to_triton.worker.confine import sandbox

    tmp = Path(tempfile.mkdtemp(prefix="p2t-sandbox-parts-"))
    saved = ({k: os.environ.get(k) for k in ("TMPDIR", "TEMP", "TMP")}, tempfile.tempdir,
             resource.getrlimit(resource.RLIMIT_CPU))
    sandbox.STATE.scratch_root = str(tmp / "w0")
    os.makedirs(sandbox.STATE.scratch_root)
    worker_ms = []
    for _ in range(n):
        t = time.perf_counter()
        sandbox.begin_call()
        sandbox.end_call()
        worker_ms.append((time.perf_counter() - t) * 1e3)
    sandbox.STATE.scratch_root = ""
    for k, v in saved[0].items():  # begin_call pointed this process's temp dir into the scratch: undo it
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    tempfile.tempdir = saved[1]
    resource.setrlimit(resource.RLIMIT_CPU, saved[2])
    ws = _workspace()
    svc = Service(ws, limits=Limits(sandbox=True))
    try:
        svc.pool.call("ping", {}, timeout_s=120)
        slot = svc.pool.slots[0]
        assert slot.proc is not None
        pid, slot_tmp = slot.proc.pid, slot.state_dir / "tmp" / slot.name.replace(":", "")
        server_ms = []
        for _ in range(n):
            t = time.perf_counter()
            sandbox_host.after_call(pid, slot_tmp, None)
            sandbox_host.free_bytes(slot_tmp)
            server_ms.append((time.perf_counter() - t) * 1e3)
        threads = len(os.listdir(f"/proc/{pid}/task"))
    finally:
        svc.close()
        shutil.rmtree(ws.parent, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return {"worker_begin_end_ms": round(statistics.median(worker_ms), 4),
            "server_after_call_ms": round(statistics.median(server_ms), 4), "worker_threads": threads}


def _gpu_toolchain() -> dict[str, Any]:
    """On a GPU, under the sandbox: run_benchmark (Triton's JIT with its C launcher and ptxas, eager, and
    torch.compile's Inductor + Triton for the baseline) and audit's compiled analysis (cuobjdump/nvdisasm), each
    on tests/faults/good.py. Any refusal shows up here as an error."""
    ws = _workspace()
    svc = Service(ws, limits=Limits(sandbox=True))
    out: dict[str, Any] = {}
    try:
        if not svc.pool.slots[0].name.startswith("cuda"):
            return {"skipped": "no GPU"}
        try:
            rep = svc.benchmark(reference="reference.py", candidates=["good.py"], compile="default", repeats=1)
            rows = [t.model_dump(mode="json") for t in rep.timings]
            out["benchmark"] = {"ok": rep.ok, "summary": rep.summary[:1500], "rows": [
                {k: r.get(k) for k in ("impl", "name", "case", "ok", "error", "median_ms", "suspect") if k in r}
                for r in rows], "sandbox": (rep.runtime or rep.environment or {}).get("sandbox")}
        except Exception as e:  # noqa: BLE001 - recorded: the point is to see what the sandbox refused
            out["benchmark"] = {"ok": False, "error": f"{type(e).__name__}: {e}"[:3000]}
        try:
            aud = svc.audit(path="good.py", reference="reference.py", compile=True)
            out["audit_compiled"] = {"summary": aud.summary[:1500], "compiled": bool(getattr(aud, "compiled", None))}
        except Exception as e:  # noqa: BLE001
            out["audit_compiled"] = {"error": f"{type(e).__name__}: {e}"[:3000]}
    finally:
        svc.close()
        shutil.rmtree(ws.parent, ignore_errors=True)
    return out


def _q(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def _corpus() -> dict[str, Any]:
    """tests/test_sandbox.py under pytest: the hostile corpus through the CLI and the MCP client, the off switch, and
    the no-Landlock path. Contained means both corpus tests (CLI, MCP client) passed and no test failed; a skip of
    another test (the compiler test where gcc is laid out otherwise) is listed, not counted against it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "server"), os.environ.get("PYTHONPATH", "")])}
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                          str(ROOT / "tests" / "test_sandbox.py")], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=900)
    results, reasons = {}, {}
    for line in out.stdout.splitlines():
        parts = line.split(" ", 1)
        if parts[0] in ("PASSED", "FAILED", "SKIPPED", "ERROR") and len(parts) == 2:
            name = parts[1].split(" - ")[0].split("::")[-1]
            results[name] = parts[0]
            if " - " in parts[1]:
                reasons[name] = parts[1].split(" - ", 1)[1][:300]
    corpus = ("test_hostile_corpus_is_contained_under_the_cli", "test_hostile_corpus_is_contained_under_the_mcp_client")
    contained = (out.returncode == 0 and all(results.get(t) == "PASSED" for t in corpus)
                 and not any(v in ("FAILED", "ERROR") for v in results.values()))
    # A test that could not start the tool (tests/test_sandbox.py says so in its failure) says nothing about
    # containment: reported apart, so a broken environment is not read as a breach.
    not_started = sorted(n for n, why in reasons.items() if "could not start the tool" in why)
    verdict = ("contained" if contained else f"NOT RUN: could not start the tool in {', '.join(not_started)}"
               if not_started else "NOT CONTAINED")
    return {"contained": bool(contained), "verdict": verdict, "tests": results, "reasons": reasons,
            "not_started": not_started, "seconds": round(time.perf_counter() - t0, 1),
            "tail": "" if contained else out.stdout[-4000:]}


CONFINED = "sandbox: landlock v"
GOOD_OUTCOMES = {"pass", "caught"}


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _acc_corpus(d: Path) -> tuple[str, str]:
    c = _json(d / "sandbox_corpus.json")
    if not c:
        return "INCOMPLETE", "no sandbox_corpus.json"
    tests = c.get("tests") or {}
    mcp = tests.get("test_hostile_corpus_is_contained_under_the_mcp_client")
    cli = tests.get("test_hostile_corpus_is_contained_under_the_cli")
    passed = sum(v == "PASSED" for v in tests.values())
    skipped = [t for t, v in tests.items() if v == "SKIPPED"]
    return ("PASS" if c.get("contained") else "INCOMPLETE" if c.get("not_started") else "FAIL"), \
        (f"{c.get('verdict')}: CLI {cli}, MCP {mcp}, {passed}/{len(tests)} tests passed in {c.get('seconds')} s"
         + (f"; skipped: {', '.join(skipped)} ({'; '.join((c.get('reasons') or {}).get(t, '') for t in skipped)})"
            if skipped else ""))


def _acc_faults(d: Path, limit: float) -> tuple[str, str]:
    f = _json(d / "faults" / "fault_suite.json")
    if not f:
        return "INCOMPLETE", "no faults/fault_suite.json"
    rows = f.get("entries") or []
    bad = [r["name"] for r in rows if not (r.get("as_expected") and r.get("next_call_ok"))]
    skipped = f.get("not_run") or []
    wall = float(f.get("wall_s") or 0)
    confined = str((f.get("runtime") or {}).get("sandbox")).startswith(CONFINED)
    state = "FAIL" if bad or wall > limit or not confined else "INCOMPLETE" if skipped else "PASS"
    return state, (f"{len(rows)} entries, UNEXPECTED {len(bad)} {bad or ''}, not run {len(skipped)} {skipped or ''}, "
                   f"{wall:.0f} s of {limit:g} s; sandbox: {str((f.get('runtime') or {}).get('sandbox'))[:40]}")


def _acc_suite(d: Path) -> tuple[str, str]:
    score = _json(d / "labels.json")
    if score is None:
        return "INCOMPLETE", "no labels.json"
    tally: dict[str, int] = {}
    for s in score:
        tally[s["outcome"]] = tally.get(s["outcome"], 0) + 1
    wrong = {k: v for k, v in tally.items() if k not in GOOD_OUTCOMES | {"not run"}}
    sandbox = str(((_json(d / "suite.json") or {}).get("runtime") or {}).get("sandbox", ""))
    state = "FAIL" if wrong or not sandbox.startswith(CONFINED) else "INCOMPLETE" if tally.get("not run") else "PASS"
    return state, f"{tally}; units confined: {sandbox.startswith(CONFINED)} ({sandbox[:40]})"


def _acc_gallery(d: Path, expected: list[str]) -> tuple[str, str]:
    g = _json(d / "gallery.json")
    if not g:
        return "INCOMPLETE", "no gallery.json"
    missing = [n for n in expected if n not in (g.get("examples") or {})]
    timed, problems = [], []
    for name, e in (g.get("examples") or {}).items():
        b = e.get("benchmark")
        if not b:
            problems.append(f"{name}: {str(e.get('benchmark_error'))[:120]}")
            continue
        sandbox = str((b.get("runtime") or b.get("environment") or {}).get("sandbox", ""))
        stages = [t for t in b.get("timings", []) if t.get("impl") not in ("eager", "torch.compile")]
        ok = stages and all(t.get("ok") and t.get("median_ms") for t in stages)
        compiled = any(t.get("impl") == "torch.compile" and t.get("median_ms") for t in b.get("timings", []))
        if ok and sandbox.startswith(CONFINED) and compiled:
            timed.append(name)
        else:
            problems.append(f"{name}: stages timed {bool(ok)}, torch.compile timed {compiled}, sandbox "
                            f"{sandbox[:40]!r}")
    if timed and not isinstance(_json(d / "peaks.json"), dict):
        problems.append("no peaks.json from the host after timing (the peaks the confined worker measured are lost)")
    state = "FAIL" if problems else "PASS" if timed and not missing else "INCOMPLETE"
    return state, (f"timed confined: {', '.join(timed) or 'none'}" + (f"; {'; '.join(problems)}" if problems else "")
                   + (f"; not reached in the time limit: {', '.join(missing)}" if missing else ""))


def _acc_overhead(d: Path) -> tuple[str, str]:
    c = _json(d / "sandbox_cost.json")
    if not c:
        return "INCOMPLETE", "no sandbox_cost.json"
    parts, ping, call = c.get("parts") or {}, c.get("warm_ping_ms") or {}, c.get("warm_call_ms") or {}
    bench = (c.get("gpu_toolchain") or {}).get("benchmark") or {}
    state = "PASS" if c.get("warm_overhead_under_5ms") and not c.get("errors") and bench.get("ok", True) else "FAIL"
    return state, (f"sandbox's own work {parts.get('total_ms')} ms/call, warm ping on-off {ping.get('overhead')} ms, "
                   f"warm call on-off {call.get('overhead')} ms; run_benchmark of good.py confined ok={bench.get('ok')}"
                   + (f"; errors: {str(c['errors'])[:300]}" if c.get("errors") else ""))


def acceptance(d: Path, fault_limit: float, gallery: list[str]) -> int:
    """Issue 37's list from PART=sandbox's folder: one line per item, PASS / FAIL / INCOMPLETE and why (files only)."""
    # a Triton launch and torch.compile confined: the gallery item (both timed in confined workers) shows them
    items = [("hostile corpus, CLI and MCP client", _acc_corpus(d)),
             ("fault suite: 0 UNEXPECTED within its limit", _acc_faults(d, fault_limit)),
             ("KernelBench-form corpus verdicts = labels", _acc_suite(d)),
             ("run_benchmark times the gallery confined", _acc_gallery(d, gallery)),
             ("warm-call overhead < 5 ms", _acc_overhead(d))]
    print("\n| acceptance (issue 37) | result | evidence |\n|---|---|---|")
    for name, (state, why) in items:
        print(f"| {name} | {state} | {why.replace('|', '/')} |")
    return 0 if all(state == "PASS" for _, (state, _) in items) else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pings", type=int, default=200)
    ap.add_argument("--calls", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2, help="on/off alternations (the medians of the rounds are kept)")
    ap.add_argument("--no-corpus", action="store_true", help="skip the hostile corpus")
    ap.add_argument("--corpus-only", action="store_true", help="only the hostile corpus (writes sandbox_corpus.json): "
                    "it checks containment, not time, so it may run beside other work")
    ap.add_argument("--acceptance", metavar="DIR", help="issue 37's acceptance list from PART=sandbox's folder")
    ap.add_argument("--fault-limit", type=float, default=170.0, help="--acceptance: the fault suite's own limit (s)")
    ap.add_argument("--gallery", default="", help="--acceptance: the examples run_examples.py was asked for")
    args = ap.parse_args(argv)
    if args.acceptance:
        return acceptance(Path(args.acceptance), args.fault_limit, [n for n in args.gallery.split(",") if n])
    if args.corpus_only:
        corpus = _corpus()
        _emit(json.dumps(corpus, indent=1), "sandbox_corpus.json")
        return 0 if corpus["contained"] else 1
    rounds: dict[str, list[dict[str, Any]]] = {"on": [], "off": []}
    for i in range(args.rounds):
        for mode in ("on", "off") if i % 2 == 0 else ("off", "on"):
            _log(f"round {i + 1}: sandbox {mode}")
            rounds[mode].append(_measure(mode == "on", args.pings, args.calls))
    summary: dict[str, Any] = {"host": platform.node(), "python": platform.python_version(), "rounds": rounds}
    summary["sandbox"] = rounds["on"][0]["sandbox"] if rounds["on"] else None
    errors = [f"sandbox {mode}: {r['error']}" for mode, rs in rounds.items() for r in rs if "error" in r]
    if errors:  # a good candidate failed: no overhead to compute; the sandbox's refusal is the finding
        summary["errors"] = errors
        rounds = {m: [r for r in rs if "error" not in r] or [_NAN_ROUND] for m, rs in rounds.items()}
    for key in ("first_call_s",):
        on = statistics.median(r[key] for r in rounds["on"])
        off = statistics.median(r[key] for r in rounds["off"])
        summary[key] = {"on": on, "off": off, "overhead": round(on - off, 3)}
    for key in ("warm_ping_ms", "warm_call_ms"):
        on = statistics.median(r[key]["median"] for r in rounds["on"])
        off = statistics.median(r[key]["median"] for r in rounds["off"])
        summary[key] = {"on": on, "off": off, "overhead": round(on - off, 3)}
    summary["parts"] = _parts()
    summary["parts"]["total_ms"] = round(summary["parts"]["worker_begin_end_ms"] + summary["parts"]["server_after_call_ms"], 4)
    # The end-to-end difference is noise-bound on a busy host; the parts are the sandbox's own work per call.
    summary["warm_overhead_under_5ms"] = (not errors and summary["parts"]["total_ms"] < 5.0
                                          and summary["warm_ping_ms"]["overhead"] < 5.0)
    _log("GPU toolchain under the sandbox (benchmark with torch.compile, compiled audit)")
    summary["gpu_toolchain"] = _gpu_toolchain()
    if not args.no_corpus:
        _log("hostile corpus: tests/test_sandbox.py")
        summary["hostile_corpus"] = _corpus()
    _emit(json.dumps(summary, indent=1), "sandbox_cost.json")
    return 0 if summary.get("hostile_corpus", {"contained": True})["contained"] else 1


def _emit(text: str, name: str) -> None:
    """Print the JSON last on stdout, and write it to $OUT/<name> when OUT is set."""
    if os.environ.get("OUT"):
        out = Path(os.environ["OUT"])
        out.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text)
    print(text)


if __name__ == "__main__":
    sys.exit(main())
