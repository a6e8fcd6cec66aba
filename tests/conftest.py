"""Shared fixtures: the repo as workspace, one warm Service per session, GPU skipping."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HAS_CUDA = Path("/dev/nvidiactl").exists() and shutil.which("nvidia-smi") is not None
# No warm spare worker in the tests' own Services unless the caller asks for one (P2T_SPARE_WORKER): a spare imports
# torch and Triton once its slot has answered, seconds of a core per Service that most tests never use (five
# worker-heavy modules: 120 -> 99 s on 2 cores, 2026-12-08); tests/test_memory.py starts one and tests it. The tools'
# processes a test starts (CLI, MCP server) get the default (child_env drops P2T_* settings).
os.environ.setdefault("P2T_SPARE_WORKER", "0")

# What a process a test starts needs from the caller's environment to import the project and its dependencies (a
# carried site folder on PYTHONPATH, a conda or module-system install, a venv) and to find the GPU and the compilers
# Triton runs. Secrets and the caller's P2T_* settings stay out: the tests run the tools with their defaults.
CHILD_ENV = ("PATH", "LANG", "VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONHOME", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
             "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "CC", "CXX")
CHILD_ENV_PREFIXES = ("LC_", "TRITON_")


def pythonpath(*first: str) -> str:
    """PYTHONPATH for a process a test starts: `first`, this checkout's server/, then the caller's PYTHONPATH (never
    dropped: on the GPU machine the project's dependencies come from a carried site folder on it)."""
    return os.pathsep.join(p for p in (*first, str(ROOT / "server"), os.environ.get("PYTHONPATH")) if p)


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a tool process a test starts: the caller's variables above, pythonpath(), then `extra`."""
    env = {k: v for k, v in os.environ.items() if k in CHILD_ENV or k.startswith(CHILD_ENV_PREFIXES)}
    env.pop("TRITON_INTERPRET", None)  # the worker decides from the device it finds
    env["PYTHONPATH"] = pythonpath()
    env.update(extra)
    return env


def corpus_sample(items, keep, ids=None, long=None) -> list:
    """A corpus as pytest params: the entries in `keep` run in the default command (the corpus's sample, picked to
    cover each kind it holds), the entries in `long` the `long` mark (python -m pytest -m long: measurement batches
    and cross-checks of an hour, not in CI), every other one the `corpus` mark (`python -m pytest -m corpus`).
    tests/README.md says when to use it: a parametrized test over a whole corpus."""
    keep, long = set(keep), set(long or ())
    missing = (keep | long) - set(items)
    assert not missing, f"the sample names entries the corpus lacks: {sorted(map(str, missing))}"
    assert not keep & long, "an entry is either in the default sample or long, not both"
    return [pytest.param(*(x if isinstance(x, tuple) else (x,)), id=None if ids is None else ids(x),
                         marks=() if x in keep else pytest.mark.long if x in long else pytest.mark.corpus)
            for x in items]  # a tuple: several argnames


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords and not HAS_CUDA:
            item.add_marker(skip)
    # `long` (tests/README.md): re-audits of the held-out measurement batches and the audit-vs-validate cross-check
    # over whole corpora, about an hour on 2 cores; they run only when -m names them (python -m pytest -m long).
    if "long" not in (config.getoption("markexpr") or ""):
        gone = [i for i in items if "long" in i.keywords]
        if gone:
            config.hook.pytest_deselected(items=gone)
            items[:] = [i for i in items if "long" not in i.keywords]


@pytest.fixture(scope="session")
def service():
    """One warm worker for the whole session, rooted at the repository."""
    from pytorch_to_triton.service import Service

    svc = Service(ROOT)
    yield svc
    svc.close()


@pytest.fixture()
def tmp_service(tmp_path: Path):
    """A Service rooted at a temporary workspace (its own worker, no warm spare: the spare's import of torch per test
    would cost a core the other test process needs; tests/test_memory.py tests the spare itself)."""
    from pytorch_to_triton.service import Service
    from pytorch_to_triton.worker_client import Limits

    svc = Service(tmp_path, limits=Limits(spare=False))
    yield svc
    svc.close()
