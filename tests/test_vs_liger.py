"""benchmarks/vs_liger.py (a GPU script) names real gallery examples and entries; its report helpers format rows.

The timing itself needs a GPU and runs on the lent H200 only; these checks keep the script's tables from drifting
away from the gallery (a renamed entry would otherwise surface only there).
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def vs_liger():
    spec = importlib.util.spec_from_file_location("vs_liger", ROOT / "benchmarks" / "vs_liger.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["vs_liger"] = mod
    spec.loader.exec_module(mod)
    return mod


def _functions(path: Path) -> set[str]:
    return {n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef)}


def test_every_op_names_a_gallery_stage3_entry(vs_liger) -> None:
    for op, (example, entry, bench, sweep, _) in vs_liger.OPS.items():
        stage3 = ROOT / "examples" / example / "stage3.py"
        assert stage3.is_file(), f"{op}: {stage3} missing"
        assert entry in _functions(stage3), f"{op}: {stage3} defines no {entry}()"
        assert op in vs_liger.TORCH, f"{op}: no eager baseline"
        assert all(len(s) == len(bench) for s in sweep), f"{op}: sweep shapes of another rank than {bench}"


def test_liger_ops_cover_the_issue_list(vs_liger) -> None:
    wanted = {"rmsnorm", "layernorm", "softmax", "cross_entropy", "swiglu", "geglu", "rope", "flce"}
    assert wanted <= set(vs_liger.OPS)


def test_table_reports_ratios_and_skips(vs_liger) -> None:
    points = [{"op": "swiglu", "shape": [4, 8], "mode": "fwd", "impls": {
        "stage3": {"median_ms": 0.5, "host_ms_per_call": 0.01, "pct_copy_bw": 91.0},
        "liger": {"skipped": "liger_kernel not importable"},
        "eager": {"median_ms": 2.0}, "torch.compile": {"error": "boom"}}}]
    table = vs_liger._table(points)
    row = table.splitlines()[-1]
    assert "| swiglu | 4x8 | fwd | 0.5000 | skip | 2.0000 | ERR | 0.01 | 91.0 | - | - |" == row
