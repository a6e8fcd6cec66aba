"""A labelled KernelBench-form corpus at full size in one run_suite call (issues 19, 16 and 40).

    PYTHONPATH=$PWD/.site:$PWD/server python3 benchmarks/gpu_suite.py [--corpus tests/multiplicity_corpus]
        [--budget 280] [--redo] [--trials 1] [--no-bench]

Every candidate of the corpus (default tests/kernelbench_corpus) at the problems' sizes: run_validation, KernelBench's
own criterion (its max difference on a failure), run_benchmark of those that validated; each verdict scored against
labels.json. Journaled: --budget stops starting units, a rerun resumes (--redo starts over). Writes suite.json,
suite.md, speedups.png and labels.json (the score) under $OUT.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))


def _score(rows: list, labels: dict) -> list[dict]:
    """Each labelled candidate's outcome: pass / caught / false_failure / missed / wrong_check / robustness_missed /
    not run."""
    out = []
    by = {f"{r.problem}/{r.candidate}": r for r in rows}
    for key, label in labels.items():
        r = by.get(key)
        if r is None or r.verdict in ("not run", "error"):
            out.append({"key": key, "outcome": "not run" if r is None or r.verdict == "not run" else "error",
                        "message": r.message if r else ""})
            continue
        got = set(r.failing_checks)
        if label["expect"] == "pass":
            outcome = "pass" if r.verdict == "pass" else "false_failure"
            if outcome == "pass" and not set(label.get("robustness") or []) <= set(r.robustness):
                outcome = "robustness_missed"  # a layout-only bug must still be named beside the verdict
        elif r.verdict == "pass":
            outcome = "missed"
        else:
            need_all, need_any = set(label.get("checks") or []), set(label.get("checks_any") or [])
            outcome = "caught" if need_all <= got and (not need_any or got & need_any) else "wrong_check"
        out.append({"key": key, "outcome": outcome, "checks": sorted(got), "kernelbench": r.kernelbench,
                    "kernelbench_expected": label.get("kernelbench_full_size"), "peak_mem_mb": r.peak_mem_mb,
                    "robustness": r.robustness,
                    "time_s": r.time_s})
    return out


def main() -> int:
    """Run the corpus suite on this machine's GPUs and print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default="tests/kernelbench_corpus", help="a folder of problems with labels.json")
    ap.add_argument("--budget", type=float, default=280.0, help="seconds after which no new unit starts")
    ap.add_argument("--redo", action="store_true", help="ignore the journal of an earlier run")
    ap.add_argument("--trials", type=int, default=1, help="validation trials per case (KernelBench's 5 seeds run too)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per problem candidate")
    ap.add_argument("--no-bench", action="store_true", help="verdicts only (validation + KernelBench's criterion)")
    args = ap.parse_args()
    out = Path(os.environ.get("OUT") or "/tmp/out")
    out.mkdir(parents=True, exist_ok=True)

    from pytorch_to_triton.service import Service
    from pytorch_to_triton.suite import FAST_P, run_suite

    labels = json.loads((ROOT / args.corpus / "labels.json").read_text())
    svc = Service(ROOT)
    stop = threading.Event()
    timer = threading.Timer(args.budget, stop.set)
    timer.daemon = True
    t0 = time.monotonic()
    last = [0.0]

    def on_event(msg: str, done: float | None, total: float | None) -> None:
        now = time.monotonic()
        if ": starting on" in msg or " ETA " in msg or now - last[0] > 20:
            last[0] = now
            print(f"[{now - t0:6.1f}s {int(done or 0)}/{int(total or 0)}] {msg[:150]}", file=sys.stderr, flush=True)

    timer.start()
    try:
        rep = run_suite(svc, directory=args.corpus, name=f"gpu-{Path(args.corpus).name}", redo=args.redo, trials=args.trials,
                        repeats=args.repeats, timeout_s=args.timeout, on_event=on_event, stop=stop,
                        benchmark=not args.no_bench)
    finally:
        timer.cancel()
        svc.close()
    wall = time.monotonic() - t0
    score = _score(rep.rows, labels)
    (out / "suite.json").write_text(rep.model_dump_json(indent=2))
    (out / "suite.md").write_text(rep.markdown)
    (out / "labels.json").write_text(json.dumps(score, indent=2))
    if rep.plot and Path(rep.plot).is_file():
        shutil.copy(rep.plot, out / "speedups.png")

    print(rep.markdown)
    print(f"suite wall time {wall:.1f} s; {rep.counts}")
    print(f"spread: {rep.spread.get('description')}")
    tally: dict[str, int] = {}
    for s in score:
        tally[s["outcome"]] = tally.get(s["outcome"], 0) + 1
    for r in rep.rows:  # KernelBench's criterion per unit, with its max difference on a failure
        print(f"{r.problem}/{r.candidate}: {r.verdict}; KernelBench {r.kernelbench} {r.kernelbench_detail[:160]}")
    print("\nlabels:", ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
    odd = [s for s in score if s["outcome"] not in ("pass", "caught", "not run")]
    for s in odd:
        print(f"  {s['outcome']}: {s['key']} {s.get('checks', '')} {s.get('message', '')[:120]}")
    if tally.get("not run"):
        print(f"  not run: {tally['not run']} (stopped at --budget {args.budget:g} s; run the script again to resume)")
    kb_diff = [s["key"] for s in score if s.get("kernelbench_expected") and s.get("kernelbench") != s["kernelbench_expected"]]
    print(f"KernelBench criterion differs from its label at full size: {kb_diff or 'none'}")
    print("\nfast_p            " + "".join(f"{'p=' + format(p, 'g'):>8}" for p in FAST_P))
    for base, vals in rep.fast_p.items():
        print(f"{'vs ' + base:<18}" + "".join(f"{(format(v, '.2f') if v is not None else '-'):>8}" for v in vals.values()))
    print(f"KernelBench criterion alone: fast_0 {rep.kernelbench_fast_0}; caught only by our checks: "
          f"{len(rep.caught_by_stricter_checks)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
