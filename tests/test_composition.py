"""Library calls are a design choice, disclosed, not a failure (issue 25 item 3; worker/validation/composition.py).

Fixtures (tests/composition_fixtures, a linear layer + sigmoid epilogue): the matmul in the library and the epilogue
in Triton passes with its composition disclosed; it fails when the task requires all_triton; PyTorch recomputing the
reference's op sequence beside a copy kernel fails; a token Triton launch next to a PyTorch result fails.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import HAS_CUDA

from pytorch_to_triton.service import Service

FIX = Path(__file__).parent / "composition_fixtures"


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory):
    ws = tmp_path_factory.mktemp("composition")
    for p in FIX.glob("*.py"):
        shutil.copy(p, ws / p.name)
    s = Service(ws)
    yield s
    s.close()


def _run(svc: Service, cand: str, **kw):
    rep = svc.validate(reference="reference.py", candidates=[cand], trials=1, **kw)
    return rep, rep.candidates[0]


def test_library_matmul_with_triton_epilogue_passes_and_is_disclosed(svc: Service) -> None:
    rep, cand = _run(svc, "library_matmul.py")
    assert rep.ok, rep.summary
    comp = cand.composition
    assert comp["library"] == {"matmul": 1} and comp["triton"]["kernels"] == ["epilogue_kernel"], comp
    assert comp["triton"]["arg_bytes"] > 0
    assert "Triton: 1 kernel" in comp["line"] and "1 matmul" in comp["line"], comp["line"]
    assert "composition: Triton: 1 kernel" in rep.summary  # the stage's makeup is in the verdict text
    warn = [f for f in cand.findings if f.check == "library_compute"]
    assert warn and warn[0].severity == "warn"
    if not HAS_CUDA:
        assert comp["triton_gpu_share"] is None and "not measured (interpreter)" in comp["line"]
    assert all(c.composition for c in cand.cases)  # per case too


def test_all_triton_requirement_fails_the_library_matmul(svc: Service) -> None:
    rep, cand = _run(svc, "library_matmul.py", require=["all_triton"])
    assert not rep.ok
    f = cand.findings[0]
    assert f.check == "pytorch_compute" and f.evidence["rule"] == "all_triton" and "addmm" in f.evidence["ops"]


def test_reference_op_sequence_recomputed_fails(svc: Service) -> None:
    rep, cand = _run(svc, "recomputes_reference.py")
    assert not rep.ok
    f = cand.findings[0]
    assert f.check == "pytorch_compute" and f.evidence["rule"] == "reference_recomputed", f
    assert {"addmm", "sigmoid"} <= set(f.evidence["reference_ops"])


def test_negligible_triton_work_fails(svc: Service) -> None:
    rep, cand = _run(svc, "token_kernel.py")
    assert not rep.ok
    f = cand.findings[0]
    assert f.check == "pytorch_compute" and f.evidence["rule"] == "negligible_triton", f
    assert f.evidence["triton_arg_bytes"] == 4 and f.evidence["output_bytes"] >= 16 * 24 * 4 * 0.1


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason="needs CUDA")
def test_gpu_time_share_is_measured_on_a_gpu(svc: Service) -> None:
    rep, cand = _run(svc, "library_matmul.py")
    comp = cand.composition
    assert rep.ok and comp["triton_gpu_share"] is not None and 0 < comp["triton_gpu_share"] <= 1, comp
    assert "of the call's GPU time" in comp["line"] and "1 matmul (cuBLAS)" in comp["line"], comp["line"]


def test_run_suite_all_triton_flag(svc: Service) -> None:
    from pytorch_to_triton.suite import run_suite

    folder = svc.ws.root / "suite" / "linear_sigmoid"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("reference.py", "_epilogue.py", "library_matmul.py"):
        shutil.copy(FIX / name, folder / name)
    kw = {"directory": "suite", "trials": 1, "kernelbench": False, "benchmark": False, "timeout_s": 300}
    default = run_suite(svc, name="mixed", **kw)
    assert [r.verdict for r in default.rows] == ["pass"], default.markdown
    strict = run_suite(svc, name="all_triton", all_triton=True, **kw)
    row = strict.rows[0]
    assert row.verdict == "fail" and row.failing_check == "pytorch_compute", strict.markdown


def test_cli_suite_takes_all_triton() -> None:
    from pytorch_to_triton.cli import build_parser

    assert build_parser().parse_args(["suite", "dir", "--all-triton"]).all_triton is True
    assert build_parser().parse_args(["suite", "dir"]).all_triton is False
