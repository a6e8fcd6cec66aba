"""Issue 37's acceptance list, read from the folder `PART=sandbox` (benchmarks/gpu_parts/sandbox.sh) fills: one line
per item, PASS / FAIL / INCOMPLETE, and why; exit 0 only when every item passes. Reads files, runs nothing.

    python3 benchmarks/sandbox_acceptance.py DIR [--fault-limit 170] [--gallery vector_add,softmax]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

CONFINED = "sandbox: landlock v"
GOOD_OUTCOMES = {"pass", "caught"}


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def corpus(d: Path) -> tuple[str, str]:
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


def faults(d: Path, limit: float) -> tuple[str, str]:
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


def suite(d: Path) -> tuple[str, str]:
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


def gallery(d: Path, expected: list[str]) -> tuple[str, str]:
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


def overhead(d: Path) -> tuple[str, str]:
    c = _json(d / "sandbox_cost.json")
    if not c:
        return "INCOMPLETE", "no sandbox_cost.json"
    parts, ping, call = c.get("parts") or {}, c.get("warm_ping_ms") or {}, c.get("warm_call_ms") or {}
    bench = (c.get("gpu_toolchain") or {}).get("benchmark") or {}
    state = "PASS" if c.get("warm_overhead_under_5ms") and not c.get("errors") and bench.get("ok", True) else "FAIL"
    return state, (f"sandbox's own work {parts.get('total_ms')} ms/call, warm ping on-off {ping.get('overhead')} ms, "
                   f"warm call on-off {call.get('overhead')} ms; run_benchmark of good.py confined ok={bench.get('ok')}"
                   + (f"; errors: {str(c['errors'])[:300]}" if c.get("errors") else ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--fault-limit", type=float, default=170.0, help="the fault suite's own limit (seconds)")
    ap.add_argument("--gallery", default="", help="the examples run_examples.py was asked for (comma-separated)")
    args = ap.parse_args(argv)
    d = Path(args.dir)
    # a Triton launch and torch.compile confined: the gallery item (both timed in confined workers) shows them
    items = [("hostile corpus, CLI and MCP client", corpus(d)),
             ("fault suite: 0 UNEXPECTED within its limit", faults(d, args.fault_limit)),
             ("KernelBench-form corpus verdicts = labels", suite(d)),
             ("run_benchmark times the gallery confined", gallery(d, [n for n in args.gallery.split(",") if n])),
             ("warm-call overhead < 5 ms", overhead(d))]
    print("\n| acceptance (issue 37) | result | evidence |\n|---|---|---|")
    for name, (state, why) in items:
        print(f"| {name} | {state} | {why.replace('|', '/')} |")
    return 0 if all(state == "PASS" for _, (state, _) in items) else 1


if __name__ == "__main__":
    sys.exit(main())
