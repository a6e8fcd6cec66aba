"""compute-sanitizer over the audit probes (issue 35, item 3): worker/probe/sanitizer.py runs and reads it, and
audit/sanitizer_evidence.py turns what it said into findings and verdicts.

No GPU here: the sanitizer's reports are fixture texts (tests/sanitizer_fixtures, the documented formats); the child's
own command line (worker/probe/rerun.py with --mark and several --only) runs for real under the interpreter; the subprocess
handling runs a stand-in executable (the `exe` seam) that prints a fixture. On a machine without CUDA the interpreter's
bounds check stands in, and the report says so. benchmarks/gpu_parts/sanitizer.sh runs the real thing on the H100.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pytorch_to_triton.audit import AuditReport, Finding
from pytorch_to_triton.audit.sanitizer_evidence import INTERPRETER, suspect_probes, weigh_sanitizer
from pytorch_to_triton.worker.probe import sanitizer

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "sanitizer_fixtures"
PKG = "tests/audit_import_fixtures"


def _text(name: str) -> str:
    return (FIX / name).read_text()


# ---- reading the sanitizer's text ----------------------------------------------------------------------------
def test_memcheck_errors_are_read_with_their_variant_kernel_line_and_thread() -> None:
    got = sanitizer.parse(_text("memcheck_oob.txt"))
    assert got["summary"] == "ERROR SUMMARY: 3 errors" and got["ran"] == ["example: example", "sizes: shape (17,)"]
    read, write = got["errors"]
    assert (read["variant"], read["kernel"], read["file"], read["line"], read["count"]) == \
        ("sizes: shape (17,)", "scale_kernel", "/work/pkg/scalepkg/kernels.py", 17, 2)  # two threads, one error
    assert read["what"] == "Invalid __global__ read of size 4 bytes" and read["thread"] == "(17,0,0)"
    assert "1 bytes after the nearest allocation" in read["detail"]
    assert (write["line"], write["what"]) == (18, "Invalid __global__ write of size 4 bytes")


def test_clean_old_form_racecheck_and_a_failed_start_are_each_read_for_what_they_are() -> None:
    clean = sanitizer.parse(_text("memcheck_clean.txt"))
    assert clean["errors"] == [] and clean["summary"] == "ERROR SUMMARY: 0 errors" and len(clean["ran"]) == 2
    old = sanitizer.parse(_text("memcheck_old_form.txt"))["errors"][0]
    assert (old["kernel"], old["file"], old["line"], old["pc"]) == ("row_kernel", "/work/k.py", 42, "0x00000908")
    race = sanitizer.parse(_text("racecheck_hazard.txt"))
    assert race["summary"].startswith("RACECHECK SUMMARY: 1 hazard")
    assert [(e["kernel"], e["line"]) for e in race["errors"]] == [("softmax_kernel", 30)]
    failed = sanitizer.parse(_text("sanitizer_failed.txt"))
    assert failed["errors"] == [] and failed["summary"] is None  # the tool's failure is no kernel's error
    assert any("terminated before first instrumented API call" in m for m in failed["messages"])


# ---- choosing and running ------------------------------------------------------------------------------------
def _probes() -> list[dict]:
    return [{"name": "example", "ran": ["example"], "failures": []},
            {"name": "sizes", "ran": ["shape (1,)", "shape (17,)"],
             "failures": [{"variant": "shape (17,)", "what": "illegal memory access"}]},
            {"name": "dtype", "ran": ["bfloat16"], "failures": [{"variant": "bfloat16", "what": "drift"}]},
            {"name": "layout", "ran": ["transposed"], "failures": []}]


def test_the_example_and_the_p0_candidates_are_chosen_then_the_suspects_probes_within_a_bound() -> None:
    assert sanitizer.variants(_probes()) == ["example: example", "sizes: shape (17,)"]  # not the bf16 drift
    assert sanitizer.variants(_probes(), ("sizes", "layout")) == [
        "example: example", "sizes: shape (17,)", "sizes: shape (1,)", "layout: transposed"]
    many = [{"name": "sizes", "ran": [f"v{i}" for i in range(40)], "failures": []}]
    assert len(sanitizer.variants(many, ("sizes",))) == sanitizer.MAX_VARIANTS
    cmd = sanitizer.command("memcheck", "/cs", {"target": "t.py", "harness": "h.py", "shape": [4, 8]},
                            ["example: example", "sizes: shape (17,)"])
    assert cmd[:5] == ["/cs", "--tool", "memcheck", "--print-limit", str(sanitizer.PRINT_LIMIT)]
    assert cmd[-4:] == ["--only", "example: example", "--only", "sizes: shape (17,)"] and "--mark" in cmd
    assert cmd[cmd.index("--shape") + 1] == "[4,8]"
    env = sanitizer.child_env()
    assert env["PYTORCH_NO_CUDA_MEMORY_CACHING"] == "1" and "TRITON_DISABLE_LINE_INFO" not in env


def test_the_child_runs_only_the_asked_variants_and_marks_each_before_it_runs() -> None:
    """The probes CLI as the sanitizer's child runs it (here under the interpreter): the marks come in run order."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    out = subprocess.run([sys.executable, "-m", "pytorch_to_triton.worker.probe.rerun", f"{PKG}/scalepkg/ops_abs.py",
                          "--harness", f"{PKG}/harness.py", "--mark", "--only", "example: example",
                          "--only", "sizes: shape (17,)"], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    marks = [ln.removeprefix(sanitizer.MARK) for ln in out.stdout.splitlines() if ln.startswith(sanitizer.MARK)]
    assert marks == ["example: example", "sizes: shape (17,)"], out.stdout + out.stderr[-2000:]
    fails = [ln for ln in out.stdout.splitlines() if ln.startswith("FAIL ")]
    assert out.returncode == 1 and fails and all("sizes: shape (17,)" in f for f in fails)


def test_with_no_harness_the_child_gets_the_callers_request_as_a_file_and_runs_that_caller() -> None:
    """Issue 49: the worker hands its child the caller the server found (a JSON file, removed after), so the worker
    never searches for it with the server's audit/discover.py; the child runs the tutorial's test_layer_norm, whose
    layer norm reads x with its row stride and a unit last-dim stride: a transposed x fails."""
    from pytorch_to_triton.audit import discover

    target = ROOT / "tests" / "audit_discover_fixtures" / "tutorials" / "layer_norm.py"
    spec = "tests/audit_discover_fixtures/tutorials/layer_norm.py::test_layer_norm"
    found = discover.find(target, ROOT)
    req = found.request(target, ROOT, lambda p: str(Path(p).resolve().relative_to(ROOT)))
    assert len(req["sources"]) > 1  # the file has other callers: the child must get only the one that gave the example
    args = {"target": str(target), "harness": str(target), "caller": req, "caller_spec": spec}
    with sanitizer.caller_file(args) as given:
        path = Path(given["caller_request"])
        cmd = sanitizer.command("memcheck", "/cs", given, ["layout: transposed"])
        assert cmd[cmd.index("--caller-request") + 1] == str(path) and "--harness" not in cmd, cmd
        sent = json.loads(path.read_text())
        assert [s["spec"] for s in sent["sources"]] == [spec] and sent["entries"] == req["entries"]
        child = cmd[cmd.index(sys.executable):]
        out = subprocess.run(child, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT / "server")},
                             capture_output=True, text=True, timeout=300)
    assert not path.exists()
    marks = [ln.removeprefix(sanitizer.MARK) for ln in out.stdout.splitlines() if ln.startswith(sanitizer.MARK)]
    assert marks[-1:] == ["layout: transposed"], out.stdout + out.stderr[-2000:]
    assert out.returncode == 1 and "FAIL layout: transposed: non-finite output" in out.stdout, out.stderr[-2000:]
    with sanitizer.caller_file({"target": "k.py", "harness": "h.py"}) as given:  # a harness: no file
        assert "caller_request" not in given

def _stand_in(tmp_path: Path, text: str, sleep: float = 0.0) -> str:
    """An executable that prints a sanitizer report whatever it is given (the `exe` seam of sanitizer.run)."""
    exe = tmp_path / "compute-sanitizer"
    (tmp_path / "report.txt").write_text(text)
    exe.write_text(f"#!/bin/sh\nsleep {sleep}\ncat '{tmp_path / 'report.txt'}'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return str(exe)


def test_run_reads_each_tools_child_and_bounds_it_in_time(tmp_path: Path) -> None:
    args = {"target": "t.py", "harness": "h.py"}
    got = sanitizer.run(args, ["example: example", "sizes: shape (17,)"], 60, _stand_in(tmp_path, _text(
        "memcheck_oob.txt")))
    mem, race = got["runs"]
    assert (mem["tool"], race["tool"], race["variants"]) == ("memcheck", "racecheck", ["example: example"])
    assert len(mem["errors"]) == 2 and not mem.get("not_run") and mem["seconds"] >= 0
    slow = sanitizer.run(args, ["example: example"], 12, _stand_in(tmp_path, _text("memcheck_clean.txt"), 30))
    assert slow["runs"][0]["timed_out"] and "timed out" in slow["runs"][0]["not_run"]
    failed = sanitizer.run(args, ["example: example"], 60, _stand_in(tmp_path, _text("sanitizer_failed.txt")))
    assert "terminated before first instrumented API call" in failed["runs"][0]["not_run"]


def test_no_sanitizer_on_the_machine_is_said(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    if Path("/usr/local/cuda/bin/compute-sanitizer").exists():
        pytest.skip("this machine has the CUDA toolkit's sanitizer")
    assert sanitizer.find() is None
    assert "compute-sanitizer not found" in sanitizer.run({"target": "t", "harness": "h"}, ["example: example"], 60)[
        "not_run"]


# ---- the sanitizer's word in the report ----------------------------------------------------------------------
def _probed(errors: list[dict], ran: list[str], device: str = "cuda") -> dict:
    runs = [{"tool": "memcheck", "variants": ran, "ran": ran, "errors": errors, "summary": f"ERROR SUMMARY: "
             f"{len(errors)} errors", "seconds": 9.5}, {"tool": "racecheck", "variants": ["example: example"],
                                                        "ran": ["example: example"], "errors": [],
                                                        "summary": "RACECHECK SUMMARY: 0 hazards displayed",
                                                        "seconds": 6.0}]
    return {"device": device, "entry_line": 8, "target": "/work/pkg/scalepkg/ops_abs.py", "probes": [],
            "sanitizer": {"variants": ran, "runs": runs}}


def _repro(probe: str, variant: str) -> str:
    return f"python -m pytorch_to_triton.probe_repro t.py --harness h.py --only '{probe}: {variant}'"


def test_an_invalid_access_on_a_contract_input_is_a_p0_on_the_sanitizers_line_of_its_own_file() -> None:
    err = {**sanitizer.parse(_text("memcheck_oob.txt"))["errors"][0]}
    rep = AuditReport(file="pkg/scalepkg/ops_abs.py")
    weigh_sanitizer(rep, _probed([err], ["example: example", "sizes: shape (17,)"]), _repro)
    f = next(f for f in rep.findings if f.id == "sanitizer_memcheck")
    assert (f.severity, f.file, f.line, f.function) == ("P0", "pkg/scalepkg/kernels.py", 17, "scale_kernel")
    assert "Invalid __global__ read of size 4 bytes" in f.evidence and "(2 reports)" in f.evidence
    assert f.reproducer.startswith("PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck "
                                   "--error-exitcode 1 python -m") and f.reproducer.endswith("'sizes: shape (17,)'")
    probe = next(p for p in rep.probes if p["name"] == "sanitizer")
    assert probe["failures"] == [{"variant": "sizes: shape (17,)", "what": err["what"]}]
    # a robustness input (a bfloat16 variant) is a note, and an unknown file's line is never put on this file
    weak = {**err, "variant": "dtype: bfloat16", "file": "/elsewhere/other.py"}
    rep2 = AuditReport(file="pkg/scalepkg/ops_abs.py")
    weigh_sanitizer(rep2, _probed([weak], ["example: example"]), _repro)
    g = rep2.findings[0]
    assert (g.severity, g.file, g.line) == ("P2", "pkg/scalepkg/ops_abs.py", 8)


def test_every_p0_claiming_an_out_of_bounds_access_gets_the_sanitizers_verdict() -> None:
    def p0(variant: str) -> Finding:
        return Finding(id="probe_sizes", category="correctness", severity="P0", file="ops.py", line=8,
                       evidence=f"{variant}: illegal memory access", why="probe sizes failed", probe="sizes",
                       reproducer=_repro("sizes", variant))

    err = sanitizer.parse(_text("memcheck_oob.txt"))["errors"][0]
    rep = AuditReport(file="ops.py", findings=[p0("shape (17,)"), p0("shape (1,)"), p0("shape (0,)")])
    weigh_sanitizer(rep, _probed([err], ["example: example", "sizes: shape (17,)", "sizes: shape (1,)"]), _repro)
    said = [f.evidence.split(" | ")[-1] for f in rep.findings if f.id == "probe_sizes"]
    assert said == ["compute-sanitizer memcheck confirms: Invalid __global__ read of size 4 bytes at scale_kernel "
                    "(kernels.py:17)", "compute-sanitizer memcheck saw no invalid access on this variant",
                    "compute-sanitizer did not run this variant"]


def test_without_a_gpu_the_interpreter_bounds_check_stands_in_and_says_so() -> None:
    f = Finding(id="probe_sizes", category="correctness", severity="P0", file="ops.py", line=8,
                evidence="shape (17,): illegal memory access", why="probe sizes failed", probe="sizes")
    rep = AuditReport(file="ops.py", findings=[f])
    weigh_sanitizer(rep, {"device": "cpu", "sanitizer": {"not_run": "not a CUDA device", "runs": []}})
    assert f.why.endswith(f"[{INTERPRETER}]") and any(c.startswith(f"memory safety: {INTERPRETER}")
                                                      for c in rep.checked)
    gpu = AuditReport(file="ops.py")
    weigh_sanitizer(gpu, {"device": "cuda", "sanitizer": {"not_run": "compute-sanitizer not found (PATH)",
                                                          "runs": []}})
    assert gpu.not_checked[0].startswith("compute-sanitizer not run (compute-sanitizer not found")


def test_static_memory_suspects_name_the_probes_the_sanitizer_reruns() -> None:
    f = Finding(id="unmasked_access", category="memory_access", severity="P0", file="k.py", line=3)
    g = Finding(id="host_sync", category="performance", severity="P1", file="k.py", line=9)
    assert suspect_probes(AuditReport(file="k.py", findings=[f, g])) == ["sizes", "example"]
    assert suspect_probes(AuditReport(file="k.py", findings=[g])) == []


def test_the_audit_of_an_out_of_bounds_kernel_on_cpu_is_labelled_as_the_interpreters(service) -> None:  # noqa: ANN001
    rep = service.audit(path=f"{PKG}/scalepkg/ops_abs.py", harness=f"{PKG}/harness.py", compile=False)
    oob = [f for f in rep.findings if f.severity == "P0" and "illegal memory access" in f.evidence]
    assert oob and all(f.why.endswith(f"[{INTERPRETER}]") for f in oob), rep.markdown
    assert any(INTERPRETER in c for c in rep.checked)


def test_a_probe_findings_out_of_bounds_variants_are_read_from_its_evidence() -> None:
    from pytorch_to_triton.audit.sanitizer_evidence import oob_variants

    grouped = Finding(id="probe_layout", category="memory_access", severity="P0", file="s.py", line=51, probe="layout",
                      evidence="transposed: non-finite output; rows of a wider buffer: illegal memory access; strided: "
                               "illegal memory access. OutOfBounds: out-of-bounds load ...",
                      reproducer=_repro("layout", "transposed"))
    assert oob_variants(grouped) == ["layout: rows of a wider buffer", "layout: strided"]
    static = Finding(id="unmasked_access", category="memory_access", severity="P0", file="k.py", line=17,
                     probe="sizes", evidence="tl.load(x_ptr + offs) | confirmed by probe sizes: shape (1,): illegal "
                                             "memory access", reproducer=_repro("sizes", "shape (1,)"))
    assert oob_variants(static) == ["sizes: shape (1,)"]


def test_an_invalid_access_behind_a_failure_the_probes_already_report_is_its_evidence_not_a_second_p0() -> None:
    err = sanitizer.parse(_text("memcheck_oob.txt"))["errors"][0]  # on sizes: shape (17,)
    wrong = Finding(id="probe_sizes", category="correctness", severity="P0", file="ops.py", line=8, probe="sizes",
                    evidence="shape (1,): non-finite output; shape (17,): non-finite output. output 0 has 3 NaN",
                    reproducer=_repro("sizes", "shape (1,)"))
    rep = AuditReport(file="pkg/scalepkg/ops_abs.py", findings=[wrong])
    weigh_sanitizer(rep, _probed([err], ["example: example", "sizes: shape (17,)"]), _repro)
    assert [f.id for f in rep.findings] == ["probe_sizes"]
    assert "behind it, compute-sanitizer memcheck: Invalid __global__ read of size 4 bytes at scale_kernel " \
           "(kernels.py:17)" in wrong.evidence


def test_a_confined_worker_without_the_sanitizers_grant_says_why_it_did_not_run(monkeypatch: pytest.MonkeyPatch,
                                                                                 tmp_path: Path) -> None:
    """Inside the sandbox the sanitizer's target cannot start unless P2T_SANDBOX_PROC=sanitizer granted it /proc and
    its ports (H100, 2026-12-06: CUDA error 304 in every audit): the audit says so instead of a failed run."""
    from pytorch_to_triton.worker.confine import sandbox

    monkeypatch.setattr(sandbox.STATE, "enabled", True)
    monkeypatch.setattr(sandbox.STATE, "tcp_ports", [])
    out = sanitizer.run({"target": "k.py", "harness": "h.py"}, ["example"], 30, exe=str(tmp_path / "compute-sanitizer"))
    assert out["runs"] == [] and "P2T_SANDBOX_PROC=sanitizer" in out["not_run"], out
    monkeypatch.setattr(sandbox.STATE, "tcp_ports", [53152, 53153])
    cmd = sanitizer.command("memcheck", "cs", {"target": "k.py", "harness": "h.py"}, ["example"])
    assert cmd[cmd.index("--port") + 1] == "53152" and cmd[cmd.index("--max-connections") + 1] == "2", cmd
