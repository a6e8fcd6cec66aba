"""The probes rerun outside the server, in a process of their own: the reproducer's run and printing (issue 26).

Two command lines share it. A person runs `python -m pytorch_to_triton.probe_repro TARGET --harness H | --caller
SPEC --only "PROBE: LABEL"` (the reproducer the audit report prints; it finds a --caller again with the server's
audit/discover.py, which is why it lives above both packages). The compute-sanitizer child of sanitizer.py runs
this module, `python -m pytorch_to_triton.worker.probe.rerun TARGET --harness H | --caller-request FILE --mark
--only ...`: the worker already holds the caller the server found, so it hands the child that request as JSON and
nothing in the worker reads the audit's search (issue 49: the worker never imports the server's audit package).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .probes import run_probes


def parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """The arguments both command lines take; each adds how it names a caller (--caller, --caller-request)."""
    ap = argparse.ArgumentParser(prog=prog, description=doc)
    ap.add_argument("target", help="the audited Triton file")
    ap.add_argument("--harness", help="make_inputs(case) (+ ENTRY, SHAPES/AUDIT_SHAPE, reference), or "
                    "a KernelBench-form task reference (the target defines ModelNew)")
    ap.add_argument("--entry")
    ap.add_argument("--shape", type=json.loads, help='the example shape as JSON, e.g. [4, 1000] (KernelBench: the '
                    'sizes, e.g. {"batch_size": 64, "dim": 512})')
    ap.add_argument("--dtype", help="the example dtype (default float32; KernelBench: the problem's own)")
    ap.add_argument("--only", action="append", help='one variant, "PROBE: LABEL" as the report names it (repeat it '
                    "for several)")
    ap.add_argument("--mark", action="store_true", help="print a line before each asked-for variant runs (the "
                    "compute-sanitizer child reads it to put each error on its variant)")
    return ap


def rerun(a: argparse.Namespace, caller: dict[str, Any] | None) -> int:
    """Run the asked variants (or all) and print each failure; exit 1 while anything fails, 2 with no example call."""
    from ..device.runtime import setup

    rt = setup()
    res = run_probes({"target": a.target, "harness": a.harness or a.target, "entry": a.entry, "shape": a.shape,
                      "dtype": a.dtype, "only": a.only, "budget_s": 1e9, "mark": a.mark, "sanitizer": False,
                      "target_gpus": "none", "caller": caller}, rt)
    if res.get("no_example"):
        print(res["no_example"])
        return 2
    failures = [(p["name"], f) for p in res["probes"] for f in p["failures"]]
    if a.only:  # one variant asked for: it fails whatever its tier (a robustness finding's reproducer too)
        failures += [(p["name"], f) for p in res["probes"] for f in p.get("aside") or []]
    for name, f in failures:  # a person's terminal, not the MCP channel
        print(f"FAIL {name}: {f['variant']}: {f['what']} {f.get('detail') or f.get('error', '')}")
    if not a.only:  # robustness records: failures only where the contract gives such inputs (the server decides)
        for p in res["probes"]:
            for f in p.get("aside") or []:
                print(f"ASIDE {p['name']}: {f['variant']}: {f['what']} (robustness kind {f.get('kind')})")
    if not failures:
        print("no probe failed")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    """The sanitizer's child: rerun the chosen variants with the harness, or with the caller the worker was given."""
    ap = parser("python -m pytorch_to_triton.worker.probe.rerun", main.__doc__)
    ap.add_argument("--caller-request", type=Path, help="instead of --harness: a JSON file holding the worker's "
                    "`caller` argument narrowed to the caller that gave the example (sanitizer.py writes it)")
    a = ap.parse_args(argv)
    if not (a.harness or a.caller_request):
        ap.error("give --harness or --caller-request")
    caller = None
    if a.caller_request:
        try:
            caller = json.loads(a.caller_request.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            ap.error(f"--caller-request {a.caller_request}: {e}")
    return rerun(a, caller)


if __name__ == "__main__":
    sys.exit(main())
