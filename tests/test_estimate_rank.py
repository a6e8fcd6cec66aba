"""benchmarks/estimate_rank.py's comparison of GPU medians with the CPU's ESTIMATE (issue 40), end to end on CPU
from a fake GPU JSON: a swap is detected, a pair within 10 % on the GPU is a tie, an estimate that cannot separate
two stages the GPU separates is a miss, a size other than the estimate's is not compared. Nothing is timed."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("estimate_rank", ROOT / "benchmarks" / "estimate_rank.py")
rank = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rank)


def _est(us: float, shape: list[int]) -> dict:
    return {"ok": True, "estimate_us": {"H200": us, "H100": 1.4 * us}, "bound": {"H200": "memory", "H100": "memory"},
            "estimated_for": shape, "dtype": "bfloat16"}


ESTIMATES = {"stages": {
    # swap: the GPU has stage2 < stage3 (by 50 %), the estimate the other way round
    "swapped/stage1.py": _est(300.0, [64, 64]), "swapped/stage2.py": _est(100.0, [64, 64]),
    "swapped/stage3.py": _est(80.0, [64, 64]),
    # tie: 1.00 vs 1.05 ms on the GPU, the estimate reversed: either order is right
    "tied/stage1.py": _est(50.0, [8, 8]), "tied/stage2.py": _est(60.0, [8, 8]),
    # the estimate gives two stages the GPU separates by 40 % the same figure
    "flat/stage1.py": _est(70.0, [8]), "flat/stage2.py": _est(70.0, [8]),
    # timed at another size than the estimate's
    "resized/stage1.py": _est(10.0, [4]), "resized/stage2.py": _est(20.0, [4]),
    "failed/stage1.py": {"ok": False, "error": "RuntimeError: boom"}, "failed/stage2.py": _est(5.0, [2]),
}}


def _gpu(name: str = "NVIDIA H100 80GB HBM3") -> dict:
    def st(**ms: float | None) -> dict:
        return {f"{k}.py": {"median_ms": v, "ok": v is not None} for k, v in ms.items()}

    return {"gpu": name, "examples": {
        "swapped": {"shape": [64, 64], "stages": st(stage1=3.0, stage2=1.0, stage3=1.5)},
        "tied": {"shape": [8, 8], "stages": st(stage1=1.05, stage2=1.00)},
        "flat": {"shape": [8], "stages": st(stage1=1.0, stage2=1.4)},
        "resized": {"shape": [8], "stages": st(stage1=1.0, stage2=2.0)},
        "failed": {"shape": [2], "stages": st(stage1=None, stage2=1.0)},
    }}


def _write(tmp_path: Path) -> tuple[Path, Path]:
    est, gpu = tmp_path / "est.json", tmp_path / "gpu.json"
    est.write_text(json.dumps(ESTIMATES))
    gpu.write_text(json.dumps(_gpu()))
    return est, gpu


def test_a_swap_is_detected_and_named(tmp_path: Path) -> None:
    est, _ = _write(tmp_path)
    res = rank.compare(_gpu(), rank.load_estimates(est))["examples"]["swapped"]
    assert not res["ranked"]
    assert res["gpu_order"] == ["stage2.py", "stage3.py", "stage1.py"]
    assert res["estimate_order"] == ["stage3.py", "stage2.py", "stage1.py"]
    assert len(res["swaps"]) == 1 and res["swaps"][0].startswith("stage2.py 1 ms vs stage3.py 1.5 ms")
    assert len(res["agree"]) == 2 and res["kendall_tau"] == (2 - 1) / 3


def test_a_tie_within_ten_percent_is_not_a_swap(tmp_path: Path) -> None:
    est, _ = _write(tmp_path)
    res = rank.compare(_gpu(), rank.load_estimates(est))["examples"]["tied"]
    assert res["gpu_order"] != res["estimate_order"]  # reversed, yet right: 5 % apart on the GPU
    assert res["ranked"] and not res["swaps"] and len(res["gpu_ties"]) == 1
    assert rank.rank_example({"a": 1.0, "b": 1.11}, {"a": 2.0, "b": 1.0})["swaps"]  # 11 % apart: a swap


def test_an_estimate_tie_the_gpu_separates_is_a_miss(tmp_path: Path) -> None:
    est, _ = _write(tmp_path)
    res = rank.compare(_gpu(), rank.load_estimates(est))["examples"]["flat"]
    assert not res["ranked"] and len(res["estimate_ties"]) == 1 and not res["swaps"]


def test_other_sizes_and_failed_stages(tmp_path: Path) -> None:
    est, _ = _write(tmp_path)
    cmp = rank.compare(_gpu(), rank.load_estimates(est))
    assert cmp["examples"]["resized"]["size_mismatch"] and not cmp["examples"]["resized"]["ranked"]
    assert cmp["examples"]["failed"]["stages"] == ["stage2.py"]  # no median, no estimate: left out
    assert cmp["counted"] == ["swapped", "tied", "flat", "resized"]  # "failed" has one stage left: not counted
    assert cmp["summary"] == "ranked as measured: 1 of 4 examples"
    assert cmp["estimate_column"] == "H100"
    assert rank.compare(_gpu("NVIDIA H200"), rank.load_estimates(est))["estimate_column"] == "H200"


def test_compare_command_prints_orders_pairs_and_summary(tmp_path: Path) -> None:
    est, gpu = _write(tmp_path)
    out = tmp_path / "cmp.json"
    p = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "estimate_rank.py"), "compare", str(gpu),
                        "--estimates", str(est), "--json-out", str(out)], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT / "server")}, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "swapped: by GPU stage2.py < stage3.py < stage1.py; by ESTIMATE stage3.py < stage2.py < stage1.py; " \
           "same order (10 % GPU ties): NO" in p.stdout
    assert "tied: by GPU stage2.py < stage1.py; by ESTIMATE stage1.py < stage2.py; same order (10 % GPU ties): yes" \
        in p.stdout
    assert "    swap: stage2.py" in p.stdout and "    gpu tie: stage1.py" in p.stdout
    assert "pairs within 10 % of each other on the GPU count as ties" in p.stdout
    assert "ranked as measured: 1 of 4 examples" in p.stdout
    assert json.loads(out.read_text())["ranked"] == ["tied"]
