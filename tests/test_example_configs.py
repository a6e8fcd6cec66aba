"""Configs the gallery pins from an H200 sweep: the pin is taken where the sweep measured, and nowhere else."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module")
def rmsnorm3():
    if os.environ.get("TRITON_INTERPRET") == "1":
        pytest.skip("the pin is a GPU path; under the interpreter the prune takes the CPU branch")
    spec = importlib.util.spec_from_file_location("p2t_test_rmsnorm_stage3", EXAMPLES / "rmsnorm" / "stage3.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rmsnorm_8192_bf16_runs_the_measured_two_pass_config(rmsnorm3) -> None:
    import torch

    x = torch.empty(2, 8192, dtype=torch.bfloat16)
    picked = rmsnorm3._prune_fwd(rmsnorm3.FWD_CONFIGS, {"x_ptr": x}, BLOCK_N=8192)
    assert [(c.kwargs["ROWS"], c.kwargs["RBLOCK"], c.num_warps) for c in picked] == [(1, 4096, 16)]
    # fp32 rows and other widths were not swept: they keep the autotuner's choice among several configs
    assert len(rmsnorm3._prune_fwd(rmsnorm3.FWD_CONFIGS, {"x_ptr": x.float()}, BLOCK_N=8192)) > 1
    assert len(rmsnorm3._prune_fwd(rmsnorm3.FWD_CONFIGS, {"x_ptr": x}, BLOCK_N=16384)) > 1
