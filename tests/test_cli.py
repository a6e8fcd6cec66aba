"""The CLI's own behaviour (issue 29 item 8): docs topic spellings, the docs cache announced, `reproduce` lines."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import pythonpath

from pytorch_to_triton.cli import _docs_topic, build_parser

TASKS = Path(__file__).parent / "tasks"


@pytest.mark.parametrize("argv", [["docs", "tl.dot"], ["docs", "topic=tl.dot"], ["docs", 'topic="tl.dot"'],
                                  ["docs", "--topic", "tl.dot"]])
def test_docs_topic_positional_keyword_and_option(argv: list[str]) -> None:
    """SKILL.md writes fetch_triton_docs(topic="tl.dot"); a person types that into the CLI too."""
    assert _docs_topic(build_parser().parse_args(argv)) == "tl.dot"


def test_docs_without_topic_is_none() -> None:
    assert _docs_topic(build_parser().parse_args(["docs"])) is None


def test_docs_says_it_created_the_cache_folder(tmp_path: Path) -> None:
    """The docs cache is the one folder written outside .pytorch-to-triton/: the first call says so, later ones not."""
    from pytorch_to_triton.docs_cache import DocsConfig
    from pytorch_to_triton.service import Service

    svc = Service(tmp_path, device="cpu")
    try:
        first = svc.docs(topic="tl.load", offline=True, config=DocsConfig(best_practices_path=None))
        again = svc.docs(topic="tl.load", offline=True, config=DocsConfig(best_practices_path=None))
    finally:
        svc.close()
    assert (tmp_path / "docs" / ".triton_docs").is_dir()
    assert first.summary.startswith("Created docs/.triton_docs/"), first.summary
    assert "Created" not in again.summary


def test_only_cases_run_reproduces_with_the_flag(tmp_service, tmp_path: Path) -> None:
    shutil.copy(TASKS / "add_reference.py", tmp_path / "reference.py")
    shutil.copy(TASKS / "add_stage1.py", tmp_path / "stage1.py")
    rep = tmp_service.validate(reference="reference.py", candidates=["stage1.py"], trials=1, only_cases=["odd_7"])
    assert rep.ok, rep.summary
    argv = shlex.split(rep.reproduce)
    assert argv[argv.index("--only-cases") + 1] == "odd_7", rep.reproduce
    args = build_parser().parse_args(argv[1:])  # the line parses as the same subset run
    assert args.only_cases == "odd_7"


def test_a_worker_that_cannot_start_is_an_environment_error_not_a_verdict(tmp_path: Path) -> None:
    """A trial venv lacked numpy (Triton's interpreter imports it): the first validate said the candidate 'crashed
    (user code called os._exit?)'. Now: exit 2, the missing module and the pip line, no verdict on the candidate."""
    root = Path(__file__).resolve().parent.parent
    fake = tmp_path / "numpy"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    env = {**os.environ, "PYTHONPATH": pythonpath(str(tmp_path))}
    r = subprocess.run([sys.executable, "-m", "pytorch_to_triton", "validate", "examples/softmax/reference.py",
                        "examples/softmax/stage1.py"], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "the worker could not start: ModuleNotFoundError: No module named 'numpy'" in r.stderr + r.stdout
    assert "pip install numpy" in r.stderr + r.stdout and "FAIL" not in r.stdout


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": pythonpath()}
    return subprocess.run([sys.executable, "-m", "pytorch_to_triton", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_paths_are_read_from_the_current_directory_workspace_only_bounds_them(tmp_path: Path) -> None:
    """Issue 49: from a folder inside the workspace, `validate ref.py cand.py --workspace ..` finds both files (it
    looked for ../ref.py before: the arguments were re-rooted at the workspace)."""
    task = tmp_path / "task"
    task.mkdir()
    shutil.copy(TASKS / "add_reference.py", task / "ref.py")
    shutil.copy(TASKS / "add_stage1.py", task / "cand.py")
    ok = _cli("validate", "ref.py", "cand.py", "--workspace", "..", "--trials", "1", "-q", cwd=task)
    assert ok.returncode == 0, ok.stdout[-2000:] + ok.stderr[-2000:]
    assert "cand.py: PASS" in ok.stdout
    (tmp_path / "outside").mkdir()
    shutil.copy(TASKS / "add_stage1.py", tmp_path / "outside" / "cand.py")
    out = _cli("validate", "ref.py", "../outside/cand.py", "--workspace", ".", "-q", cwd=task)
    assert out.returncode == 2 and "outside the workspace" in out.stderr
    assert str(task.resolve()) in out.stderr  # the error names the workspace (here the current directory too)
    missing = _cli("audit", "nope.py", "--workspace", "..", "-q", cwd=task)
    assert missing.returncode == 2
    assert f"current directory {task.resolve()}" in missing.stderr and f"workspace is {tmp_path.resolve()}" in \
        missing.stderr, missing.stderr
