"""The examples gallery: every stage of every example passes run_validation; every stage 3 audits without a P0.

Runs under Triton's CPU interpreter when there is no GPU (the examples keep their SHAPES small for that). An
example whose reference declares GRAD_INPUTS is validated with gradients=true: stages that implement backward
must pass the gradient comparison, forward-only stages declare SUPPORTS_BACKWARD = False and are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import corpus_sample

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/reference.py"))
STAGES = ("stage1.py", "stage2.py", "stage3.py")
# The default command validates one example's three stages (vector_add) and audits every stage 3; the corpus command
# validates all thirteen.
SAMPLE = [ROOT / "examples" / "vector_add"]


def _rel(p: Path) -> str:
    return str(p.relative_to(ROOT))


def _declares(path: Path, name: str, value: str | None = None) -> bool:
    """True when the file assigns `name` at module level (to `value`, if given)."""
    pattern = rf"^{name}\s*(:[^=]*)?=\s*" + (re.escape(value) + r"\b" if value else "")
    return re.search(pattern, path.read_text(), flags=re.MULTILINE) is not None


def test_gallery_is_complete() -> None:
    assert EXAMPLES, "no examples/*/reference.py found"
    missing = [f"{ex.name}/{f}" for ex in EXAMPLES for f in (*STAGES, "README.md") if not (ex / f).is_file()]
    assert not missing, f"examples missing files: {missing}"


@pytest.mark.parametrize("example", corpus_sample(EXAMPLES, SAMPLE, ids=lambda p: p.name))
def test_example_stages_pass_validation(service, example: Path) -> None:
    ref = example / "reference.py"
    stages = [example / s for s in STAGES if (example / s).is_file()]
    gradients = _declares(ref, "GRAD_INPUTS")
    rep = service.validate(reference=_rel(ref), candidates=[_rel(s) for s in stages], trials=1,
                           gradients=gradients)
    problems = {}
    for cand in rep.candidates:
        if not cand.ok:
            bad = [f"{c.name} {c.dtype}" for c in cand.cases if not c.ok]
            problems[cand.candidate] = {
                "findings": [f"{f.severity} {f.check} [{f.case}] x{f.count}: {f.message}" for f in cand.findings],
                "failing_cases": bad,
                "error": cand.error,
            }
    assert rep.ok and not problems, f"{rep.summary}\n{problems}"
    assert len(rep.candidates) == len(stages)
    for cand, stage in zip(rep.candidates, stages, strict=True):
        assert cand.cases, f"{cand.candidate}: no case ran"
        if gradients and not _declares(stage, "SUPPORTS_BACKWARD", "False"):
            grads = [c for c in cand.cases if c.name.endswith(":grad")]
            assert grads and all(c.ok for c in grads), f"{cand.candidate}: no passing gradient case ({cand.notes})"


# The default command audits two stage 3s (a library conv with a Triton epilogue, a scan: 11-16 s each on 2 cores);
# the corpus command the rest (flash_attention's took 25 s, matmul's 63 s, rope's 41 s; tests/test_audit_validate.py
# keeps a causal attention in the default command).
AUDIT_SAMPLE = [e for e in EXAMPLES if e.name in ("conv_epilogue_pool", "prefix_scan")]


@pytest.mark.parametrize("example", corpus_sample(EXAMPLES, AUDIT_SAMPLE, ids=lambda p: p.name))
def test_stage3_audit_has_no_p0(service, example: Path) -> None:
    rep = service.audit(path=_rel(example / "stage3.py"), compile=False)
    p0 = [(f.check, f.line, f.evidence) for f in rep.findings if f.severity == "P0"]
    assert not p0, f"{_rel(example / 'stage3.py')}: {p0}"


def test_conv_example_stage3_fast_sample(service) -> None:
    # The default command's sample of the conv example (the whole gallery runs under -m slow): stage 3's implicit
    # GEMM with the epilogue and the 2 x 2 pooling on its four accumulators, at the sidecar's interpreter size.
    ex = ROOT / "examples" / "conv_epilogue_pool"
    rep = service.validate(reference=_rel(ex / "reference.py"), candidates=[_rel(ex / "stage3.py")], trials=1,
                           only_cases=["sized"])
    cand = rep.candidates[0]
    assert rep.ok and [c.name for c in cand.cases] == ["sized"], rep.summary
    comp = cand.composition or {}
    assert not comp.get("library") and "conv_pool_igemm_kernel" in comp["triton"]["kernels"], comp  # no library conv
