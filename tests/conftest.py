"""Shared fixtures: the repo as workspace, one warm Service per session, GPU skipping."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HAS_CUDA = Path("/dev/nvidiactl").exists() and shutil.which("nvidia-smi") is not None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords and not HAS_CUDA:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def service():
    """One warm worker for the whole session, rooted at the repository."""
    from pytorch_to_triton.service import Service

    svc = Service(ROOT)
    yield svc
    svc.close()


@pytest.fixture()
def tmp_service(tmp_path: Path):
    """A Service rooted at a temporary workspace (its own worker)."""
    from pytorch_to_triton.service import Service

    svc = Service(tmp_path)
    yield svc
    svc.close()
