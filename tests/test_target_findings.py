"""audit/target_findings.py and the compile-count probe (audit/evidence.py): the CPU-side compile in audit_kernel."""

from __future__ import annotations

from pytorch_to_triton.audit import AuditReport, Finding, target_findings
from pytorch_to_triton.audit.evidence import weigh

FIX = "tests/target_compile_fixtures"


def _row(**kw):
    return {"kernel": "k", "target": "sm_90", "ok": True, "config": "BLOCK=64, num_warps=4, num_stages=3",
            "num_warps": 4, "n_regs": 40, "n_spills": 0, "shared": 1024, "autotuned": True, **kw}


def _report(rows):
    rep = AuditReport(file="k.py", kernels=[{"name": "k", "line": 7}])
    target_findings.add(rep, {"target_compile": {"triton_version": "3.9.0", "targets": ["sm_90"], "rows": rows,
                                                 "specialisations": 1}})
    return {f.id: f for f in rep.findings}


def test_spills_and_an_oversized_autotune_config_are_p1_with_the_config():
    got = _report([_row(), _row(config="BLOCK=256, num_warps=4, num_stages=5", shared=300000),
                   _row(config="BLOCK=128, num_warps=1, num_stages=3", n_spills=90)])
    assert got["target_resources"].severity == "P1" and "BLOCK=256" in got["target_resources"].evidence
    assert got["register_spills"].severity == "P1" and "BLOCK=128, num_warps=1" in got["register_spills"].evidence
    assert got["register_spills"].line == 7  # the kernel's def line (no compiler line for a spill)


def test_a_spill_finding_is_not_contradicted_by_not_checked_register_pressure():
    """Issue 40's trial: "not checked: register pressure" printed beside a register_spills P1. Once the cubins were
    read, "not checked" names only what they do not show."""
    from pytorch_to_triton.audit.analyze import NOT_CHECKED

    rep = AuditReport(file="k.py", kernels=[{"name": "k", "line": 7}], not_checked=list(NOT_CHECKED))
    target_findings.add(rep, {"target_compile": {"triton_version": "3.9.0", "targets": ["sm_90"], "specialisations": 1,
                                                 "rows": [_row(n_spills=90)]}})
    assert any(f.id == "register_spills" for f in rep.findings)
    assert not any(n.startswith("register pressure") for n in rep.not_checked), rep.not_checked
    assert any("beyond the cubins' registers, spills and shared memory" in n for n in rep.not_checked)
    untouched = AuditReport(file="k.py", not_checked=list(NOT_CHECKED))
    target_findings.add(untouched, None)
    assert untouched.not_checked == NOT_CHECKED


def test_a_compile_failure_follows_the_tier_of_the_sizes_that_launched_it():
    """Issue 45: BS = next_power_of_2(0) = 0 (an empty batch, robustness "empty") does not compile: a robustness
    finding, a P0 only where the contract requires empty inputs; the same failure at a contract size is a P0; a
    shared-memory overflow the autotuner prunes stays P1."""
    rows = [_row(), _row(ok=False, line=14, config="BS=0", tier="robustness", kind="empty",
                         error="ValueError: arange's end argument must be greater than the start argument")]
    rep = AuditReport(file="k.py", kernels=[{"name": "k", "line": 7}])
    section = {"target_compile": {"triton_version": "3.9.0", "targets": ["sm_90"], "rows": rows, "specialisations": 2}}
    target_findings.add(rep, section)
    assert not rep.findings and [(r.kind, r.check, r.title) for r in rep.robustness] == [
        ("empty", "target_compile", "empty dims")], rep
    assert "numel() == 0" in rep.robustness[0].fix
    req = AuditReport(file="k.py", kernels=[{"name": "k", "line": 7}])
    target_findings.add(req, section, {"empty"})
    assert [(f.id, f.severity) for f in req.findings] == [("target_compile", "P0")] and not req.robustness
    got = _report([_row(), _row(ok=False, line=14, config="BS=64", error="CompilationError: x")])
    assert got["target_compile"].severity == "P0"
    pruned = _report([_row(), _row(config="BLOCK=256", shared=300000)])
    assert pruned["target_resources"].severity == "P1"


def test_a_failed_compile_is_p0_on_the_compilers_line():
    got = _report([_row(ok=False, line=12, error="CompilationError: at 3:4: NameError('Cannot access global X')")])
    f = got["target_compile"]
    assert f.severity == "P0" and f.line == 12 and "Cannot access global X" in f.evidence and "3.9.0" in f.evidence


def test_a_clean_compile_adds_nothing_but_the_checked_line():
    rep = AuditReport(file="k.py", kernels=[{"name": "k", "line": 7}])
    target_findings.add(rep, {"target_compile": {"triton_version": "3.9.0", "targets": ["sm_90"], "rows": [_row()],
                                                 "specialisations": 1}})
    assert rep.findings == [] and any("compiled for sm_90" in c for c in rep.checked)


def _recompile(new_keys):
    f = Finding(id="constexpr_recompile", category="performance", severity="P1", file="k.py", line=9,
                evidence="N_ROWS=m", why="N_ROWS is a tl.constexpr of softmax_kernel and gets ...")
    probed = {"probes": [{"name": "example", "ran": ["example"], "failures": []},
                         {"name": "rows", "ran": ["rows 1"], "failures": []}],
              "launched": ["softmax_kernel"], "constexpr_values": {"softmax_kernel": {"N_ROWS": ["3", "6"]}},
              "batch_new_keys": new_keys}
    return weigh(AuditReport(file="k.py", findings=[f]).finalize(), probed).findings[0]


def test_compile_count_keeps_p1_only_when_the_batch_makes_a_new_key():
    kept = _recompile({"softmax_kernel": 0})
    assert kept.severity == "P2" and "kept the example's specialisation key" in kept.why
    assert _recompile({}).severity == "P2"  # the batch change never launched it: no second compile seen
    shown = _recompile({"softmax_kernel": 2})
    assert shown.severity == "P1" and "gave softmax_kernel 2 new specialisation(s)" in shown.evidence


def test_audit_compile_count_on_real_probes(service):
    rows = service.audit(path="tests/audit_probe_fixtures/softmax_constexpr_rows.py",
                         harness="tests/audit_probe_fixtures/harness_rows.py", compile=False)
    f = next(f for f in rows.findings if f.check == "constexpr_recompile")
    assert f.severity == "P1" and "compile count: other batch sizes gave softmax_kernel" in f.evidence, rows.markdown
    cols = service.audit(path=f"{FIX}/softmax_constexpr_cols.py", harness=f"{FIX}/harness_softmax.py", compile=False)
    f = next((f for f in cols.findings if f.check == "constexpr_recompile"), None)
    assert f is None or f.severity == "P2", cols.markdown


def test_audit_reports_a_kernel_that_does_not_compile_for_sm90(service):
    rep = service.audit(path=f"{FIX}/scale_global.py", harness=f"{FIX}/harness_scale.py")
    f = next(f for f in rep.findings if f.check == "target_compile")
    assert f.severity == "P0" and f.line == 14 and "SCALE" in f.evidence and "sm_90" in f.evidence, rep.markdown
    off = service.audit(path=f"{FIX}/scale_global.py", harness=f"{FIX}/harness_scale.py", compile=False)
    assert not [f for f in off.findings if f.check.startswith("target_")]  # compile=false: no compile
