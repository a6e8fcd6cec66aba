"""The audit's reproducer, `python -m pytorch_to_triton.probe_repro TARGET --harness H | --caller SPEC --only
"PROBE: LABEL"`: reruns one probe variant outside the server and exits 1 while it still fails (issue 26).

It sits above both packages because a --caller ('tests/x.py::test_softmax', as the report names the caller that
gave the audit its example call) is found again from the files by the server's static search (audit/discover.py),
then run by the worker's probes (worker/probe/rerun.py) in this process. The server never imports this module:
it only prints the command (audit/probe_plan.py), so the server process still never imports torch.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .audit import discover
from .errors import UsageError
from .worker.probe import rerun


def main(argv: list[str] | None = None) -> int:
    """The reproducer: rerun one probe variant (or all) outside the server; exit 1 while anything fails."""
    ap = rerun.parser("python -m pytorch_to_triton.probe_repro", main.__doc__)
    ap.add_argument("--caller", help="instead of --harness: the file's own caller that gave the audit its example "
                    "call, as the report names it ('path::test_softmax', 'path::__main__'; audit/discover.py)")
    a = ap.parse_args(argv)
    if not (a.harness or a.caller):
        ap.error("give --harness or --caller")
    caller = None
    if a.caller:
        try:
            caller = discover.request_for(Path(a.target), a.caller)
        except UsageError as e:
            ap.error(str(e))
    return rerun.rerun(a, caller)


if __name__ == "__main__":
    sys.exit(main())
