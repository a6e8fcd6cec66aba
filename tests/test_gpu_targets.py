"""gpu_targets.py: the target GPUs of the CPU-side compile, from arguments, the sidecar or the environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytorch_to_triton import gpu_targets, sidecar
from pytorch_to_triton.errors import UsageError


@pytest.mark.parametrize("raw,want", [(None, [90]), ("sm_90,sm_100", [90, 100]), ("8.0", [80]), ([89, "90"], [89, 90]),
                                      ("H100", [90]), (["A100", "sm_80"], [80]), ("none", [])])
def test_parse(raw, want):
    assert gpu_targets.parse(raw) == want


@pytest.mark.parametrize("raw", ["sm_75", "V100", "sm_9x"])
def test_parse_refuses_unknown_targets_and_says_what_works(raw):
    with pytest.raises(ValueError, match=r"unknown target GPU .*sm_90.*'none'"):
        gpu_targets.parse(raw)


def test_sidecar_target_gpus(tmp_path: Path):
    path = tmp_path / "reference.p2t.toml"
    assert sidecar.parse('target_gpus = ["sm_90", "B200"]', path).target_gpus == [90, 100]
    with pytest.raises(UsageError, match="reference.p2t.toml: target_gpus: unknown target GPU 'sm_61'"):
        sidecar.parse('target_gpus = ["sm_61"]', path)


def test_service_refuses_a_bad_target_before_any_worker(tmp_service, tmp_path: Path):
    (tmp_path / "ref.py").write_text("def reference(x):\n    return x\n")
    (tmp_path / "cand.py").write_text("def candidate(x):\n    return x\n")
    with pytest.raises(UsageError, match="target_gpus: unknown target GPU 'sm_1'"):
        tmp_service.validate(reference="ref.py", candidates=["cand.py"], target_gpus=["sm_1"])
