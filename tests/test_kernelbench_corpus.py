"""The whole KernelBench-form corpus (tests/kernelbench_corpus) on the interpreter at the sizes the validator
picks itself: no sizes passed, so this is what a user without a GPU gets. Every correct candidate passes and every
planted bug fails with its labelled check, except the races, which only a GPU shows (programs run one at a time
here). The GPU run at full size is benchmarks/gpu_suite.py (benchmarks/RESULTS.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_suite import CORPUS, LABELS, _caught

from pytorch_to_triton.service import Service
from pytorch_to_triton.suite import run_suite

PROBLEMS = sorted({k.split("/")[0] for k in LABELS})
# The corpus command only, one test per problem (the whole corpus takes about 6 minutes on 2 idle cores: each problem
# well under one). The default command's sample of this corpus is tests/test_suite.py (two problems at SIZES).
pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("kernelbench_corpus")
    shutil.copytree(CORPUS, ws / "corpus")
    return ws


@pytest.mark.parametrize("problem", PROBLEMS)
def test_problem_at_automatic_sizes(workspace: Path, problem: str) -> None:
    svc = Service(workspace)
    try:
        rep = run_suite(svc, directory="corpus", problems=[problem], name=problem, trials=1, kernelbench=False,
                        benchmark=False, timeout_s=600)
    finally:
        svc.close()
    rows = {f"{r.problem}/{r.candidate}": r for r in rep.rows}
    mine = {k for k in LABELS if k.startswith(problem + "/")}
    assert set(rows) == mine, f"suite rows vs labels: {sorted(set(rows) ^ mine)}"
    wrong = []
    for key in sorted(mine):
        label, row = LABELS[key], rows[key]
        if label.get("gpu_only") and row.verdict == "pass":
            continue  # a race: the interpreter cannot show it
        if not _caught(row, label):
            wrong.append(f"{key}: expected {label['expect']} {label.get('checks') or label.get('checks_any') or ''}, "
                         f"got {row.verdict} {row.failing_checks}")
    assert not wrong, "\n".join(wrong)
    notes = " ".join(n for r in rep.rows for n in r.notes)
    assert "full size was not run" in notes  # the report says the problem ran shrunk
