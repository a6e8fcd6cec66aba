"""Configs the gallery pins from an H200 sweep: the pin is taken where the sweep measured, and nowhere else."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _stage3(example: str):
    if os.environ.get("TRITON_INTERPRET") == "1":
        pytest.skip("the pin is a GPU path; under the interpreter the prune takes the CPU branch")
    spec = importlib.util.spec_from_file_location(f"p2t_test_{example}_stage3", EXAMPLES / example / "stage3.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def rmsnorm3():
    return _stage3("rmsnorm")


@pytest.fixture(scope="module")
def layernorm3():
    return _stage3("layernorm")


def test_rmsnorm_8192_bf16_runs_the_measured_two_pass_config(rmsnorm3) -> None:
    import torch

    x = torch.empty(2, 8192, dtype=torch.bfloat16)
    picked = rmsnorm3._prune_fwd(rmsnorm3.FWD_CONFIGS, {"x_ptr": x}, BLOCK_N=8192)
    assert [(c.kwargs["ROWS"], c.kwargs["RBLOCK"], c.num_warps) for c in picked] == [(1, 4096, 16)]
    # fp32 rows and other widths were not swept: they keep the autotuner's choice among several configs
    assert len(rmsnorm3._prune_fwd(rmsnorm3.FWD_CONFIGS, {"x_ptr": x.float()}, BLOCK_N=8192)) > 1
    assert len(rmsnorm3._prune_fwd(rmsnorm3.FWD_CONFIGS, {"x_ptr": x}, BLOCK_N=16384)) > 1


def test_rmsnorm_backward_pin_only_where_the_sweep_measured(rmsnorm3) -> None:
    # 8192x8192 bf16 on the H100 (2026-12-07): (1 row, 1 program per SM, 16 warps) 0.258 ms against the autotuned
    # 0.417; 16384 and 1024 were measured too and stay on the default plan (autotuned warps).
    assert rmsnorm3.bwd_plan(8192) == (1, 1, 16)
    assert rmsnorm3.bwd_plan(16384) == (1, 2, None)
    assert rmsnorm3.bwd_plan(1024) == (4, 2, None)
    assert rmsnorm3.bwd_plan(128) == (16, 2, None)


def test_layernorm_pins_take_the_pinned_config_and_nothing_else(layernorm3) -> None:
    import torch

    x = torch.empty(2, 8192, dtype=torch.bfloat16)
    assert layernorm3.bwd_plan(8192) == (1, 2, None)  # no sweep yet: the default plan
    assert len(layernorm3._prune_fwd(layernorm3.FWD_CONFIGS, {"x_ptr": x}, BLOCK_N=8192)) > 1
    pin = {"ROWS": 1, "PPS": 0, "LATE_W": True, "num_warps": 16}
    layernorm3.FWD_PINS[(8192, torch.bfloat16)] = pin
    layernorm3.BWD_PINS[8192] = (1, 1, 16)
    try:
        picked = layernorm3._prune_fwd(layernorm3.FWD_CONFIGS, {"x_ptr": x}, BLOCK_N=8192)
        assert [(c.kwargs, c.num_warps) for c in picked] == [({"ROWS": 1, "PPS": 0, "LATE_W": True}, 16)]
        assert len(layernorm3._prune_fwd(layernorm3.FWD_CONFIGS, {"x_ptr": x.float()}, BLOCK_N=8192)) > 1
        assert layernorm3.bwd_plan(8192) == (1, 1, 16) and layernorm3.bwd_plan(4096) == (1, 2, None)
    finally:
        layernorm3.FWD_PINS.clear()
        layernorm3.BWD_PINS.clear()
