"""First fixes follow the evidence (issue 29 item 5; worker/validation/first_fix.py, worker/device/interp_hints.py, interp_compat.py).

The three wrong hints of the issue, each with a fixture kernel (tests/first_fix_fixtures, tests/interp_fixtures):
NaN on a `strided` variant from an ignored bias stride (was: "subtract the max before exp, add eps"); a
`(cols < V) & valid` mask under the interpreter (was: "the mask is not boolean"); a NaN-propagation failure in a
kernel without nan_to_num or clamping (was: "no nan_to_num, clamping ...").
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import HAS_CUDA

from pytorch_to_triton.service import Service
from pytorch_to_triton.worker.device import interp_hints
from pytorch_to_triton.worker.validation import first_fix

HERE = Path(__file__).parent
FIX = HERE / "first_fix_fixtures"
interp_only = pytest.mark.skipif(HAS_CUDA, reason="checks Triton's CPU interpreter; a GPU worker does not use it")


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory):
    ws = tmp_path_factory.mktemp("first_fix")
    for p in FIX.glob("*.py"):
        shutil.copy(p, ws / p.name)
    shutil.copy(HERE / "kernelbench_fixtures" / "affine_nan_to_zero.py", ws / "affine_nan_to_zero.py")
    for name in ("ce_reference.py", "ce_mask_scalar.py"):
        shutil.copy(HERE / "interp_fixtures" / name, ws / name)
    s = Service(ws)
    yield s
    s.close()


def _strided_fix_follows_the_evidence(f) -> None:
    assert f.case == "medium:strided", f
    assert "`medium:strided` variant" in f.fix and "layout" in f.fix and "stride" in f.fix, f.fix
    assert "case medium with the same values passed" in f.fix
    for guess in ("subtract the max", "eps", "fp32"):
        assert guess not in f.fix, f.fix
    assert f.variant["changes"] == "layout"


def test_nan_on_strided_variant_names_the_layout_not_numerics(svc: Service) -> None:
    # The layout variants are robustness cases (issue 25's two tiers): the contract passes, and the finding sits in
    # the candidate's `robustness` section with the same evidence-based fix a contract finding gets.
    rep = svc.validate(reference="bias_softmax_reference.py", candidates=["bias_softmax_ignores_bias_stride.py"],
                       trials=1)
    cand = rep.candidates[0]
    assert rep.ok and all(c.ok for c in cand.cases if c.tier == "contract"), rep.summary  # contiguous: correct
    assert "not robust to: non-contiguous input" in rep.verdict and not rep.first_fix, rep.summary
    assert not any(f.case and ":strided" in f.case for f in cand.findings), cand.findings
    r = next(f for f in cand.robustness if f.check == "nonfinite")
    assert r.kind == "layouts"
    _strided_fix_follows_the_evidence(r)
    assert "the layout is the cause" in rep.summary  # the summary's robustness line carries that fix
    # Required (strict / require = ["layouts"]): the same finding fails the contract and is the first fix.
    rep = svc.validate(reference="bias_softmax_reference.py", candidates=["bias_softmax_ignores_bias_stride.py"],
                       trials=1, require=["layouts"])
    cand = rep.candidates[0]
    assert not rep.ok and not cand.robustness, rep.summary
    _strided_fix_follows_the_evidence(next(f for f in cand.findings if f.check == "nonfinite"))
    assert rep.first_fix and "strided" in rep.first_fix and "the layout is the cause" in rep.first_fix


def test_nan_spreading_is_not_blamed_on_constructs_the_kernel_lacks(svc: Service) -> None:
    rep = svc.validate(reference="affine_reference.py", candidates=["affine_row_stat_nan.py"], trials=1)
    assert rep.ok, rep.summary  # nan_inf is a robustness case: reported in `robustness`, not failing the contract
    f = next(f for f in rep.candidates[0].robustness if f.check == "nan_propagation")
    assert f.case == "nan_inf" and f.kind == "nan"
    for absent in ("nan_to_num", "clamp", "tl.maximum", "tl.where"):
        assert absent not in f.fix, f.fix
    assert "reached outputs whose reference stays finite" in f.fix and "reduction" in f.fix


def test_nan_dropped_names_the_construct_present_with_its_line(svc: Service) -> None:
    rep = svc.validate(reference="affine_reference.py", candidates=["affine_nan_to_zero.py"], trials=1)
    f = next(f for f in rep.candidates[0].robustness if f.check == "nan_propagation")
    src = (HERE / "kernelbench_fixtures" / "affine_nan_to_zero.py").read_text().splitlines()
    line = next(i for i, s in enumerate(src, 1) if "tl.where" in s)
    assert f"tl.where (line {line}:" in f.fix, f.fix
    assert "nan_to_num" not in f.fix and "clamp" not in f.fix, f.fix


@interp_only
def test_scalar_and_block_comparison_mask_runs_under_the_interpreter(svc: Service) -> None:
    rep = svc.validate(reference="ce_reference.py", candidates=["ce_mask_scalar.py"], trials=1)
    assert rep.ok, rep.summary  # was: "mask has unsupported dtype" and "the mask is not boolean"
    assert rep.runtime.get("bool_splat") == "int1 splats are bool"


def test_mask_error_on_a_comparison_line_does_not_say_not_boolean(tmp_path: Path) -> None:
    ev = {"hint": interp_hints.HINTS[0][2], "limitation": "interp_mask_dtype", "file": "k.py", "line": 9,
          "kernel_source_line": "x = tl.load(x_ptr + cols, mask=(cols < V) & valid, other=0.0)"}
    report = {"findings": [{"check": "exception", "severity": "fail", "evidence": ev, "fix": ""}], "cases": []}
    interp_hints.annotate(report, True, tmp_path / "k.py")
    fix = report["findings"][0]["fix"]
    assert "type is boolean" in fix and "not boolean" not in fix, fix
    ev2 = {**ev, "hint": interp_hints.HINTS[0][2], "kernel_source_line": "x = tl.load(x_ptr + offs, mask=offs)"}
    report = {"findings": [{"check": "exception", "severity": "fail", "evidence": ev2, "fix": ""}], "cases": []}
    interp_hints.annotate(report, True, tmp_path / "k.py")
    assert "pass a comparison" in report["findings"][0]["fix"]


def test_size_variants_name_what_changed_only_when_the_main_case_passed(tmp_path: Path) -> None:
    src = tmp_path / "cand.py"
    src.write_text("def f(x):\n    return x\n")
    zero = {"check": "exception", "severity": "fail", "case": "zero", "message": "tl.arange(0, 0)", "fix": "x"}
    report = {"findings": [zero], "cases": [{"name": "shrunk", "ok": True}, {"name": "zero", "ok": False}]}
    first_fix.explain(report, src)
    assert "`zero` variant" in zero["fix"] and "numel() == 0" in zero["fix"], zero["fix"]
    odd = {"check": "mismatch", "severity": "fail", "case": "odd", "message": "m", "fix": "keep"}
    report = {"findings": [odd], "cases": [{"name": "shrunk", "ok": False}, {"name": "odd", "ok": False}]}
    first_fix.explain(report, src)
    assert odd["fix"] == "keep"  # the main case fails too: nothing says the size is the cause
