"""The audit's reproducer command line, server/pytorch_to_triton/probe_repro.py (issue 49): above both the server's
audit package (a --caller is found again by audit/discover.py) and the worker's probes (worker/probe/rerun.py), and
imported by neither, so the server process still never imports torch. Its runs that fail while a variant does are
test_audit_probes.py's (--harness) and test_audit_discover.py's (--caller); the sanitizer's child, test_sanitizer.py's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "server")}


def test_the_server_imports_neither_torch_nor_the_reproducer() -> None:
    code = ("import sys, pytorch_to_triton.mcp_server, pytorch_to_triton.cli, pytorch_to_triton.audit.discover, "
            "pytorch_to_triton.audit.probe_plan; print(sorted(m for m in ('torch', 'triton', "
            "'pytorch_to_triton.probe_repro', 'pytorch_to_triton.worker.probe.rerun') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr[-2000:]


def test_a_caller_the_search_does_not_find_is_refused_naming_those_it_finds() -> None:
    target = "tests/audit_discover_fixtures/tutorials/layer_norm.py"
    out = subprocess.run([sys.executable, "-m", "pytorch_to_triton.probe_repro", target, "--caller", f"{target}::nope",
                          "--only", "layout: transposed"], cwd=ROOT, env=ENV, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2 and f"no caller '{target}::nope'" in out.stderr, out.stderr[-2000:]
    assert f"{target}::test_layer_norm" in out.stderr
    out = subprocess.run([sys.executable, "-m", "pytorch_to_triton.probe_repro", target], cwd=ROOT, env=ENV,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "give --harness or --caller" in out.stderr, out.stderr[-2000:]
