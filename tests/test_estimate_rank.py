"""benchmarks/estimate_rank.py's comparison of GPU medians with the CPU's ESTIMATE (issues 40, 46), end to end on CPU
from a fake GPU JSON: a swap is detected, a pair within 10 % on the GPU is a tie, an estimate that cannot separate
two stages the GPU separates is a miss, a size other than the estimate's is not compared, each stage's GPU / ESTIMATE
ratio is judged against 2x, and a saved record is re-timed with today's model. Nothing is timed."""

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
    assert cmp["summary"] == "within 2x: 0 of 10 stages; ranked as measured: 1 of 4 folders"
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
    assert "within 2x: 0 of 10 stages; ranked as measured: 1 of 4 folders" in p.stdout
    assert json.loads(out.read_text())["ranked"] == ["tied"]


def test_ratios_within_2x_and_a_saved_record_retimed_by_todays_model(tmp_path: Path) -> None:
    """A stage whose median is 1.5x its ESTIMATE is within 2x, one at 3x is not; a row that keeps its counts (the
    worker's record) is timed by roofline_estimate.stage_time now, not by the figure saved with it; an older GPU
    JSON that names a gallery example without examples/ still finds it."""
    from pytorch_to_triton import gpu_peaks
    from pytorch_to_triton.roofline_estimate import stage_time

    launch = {"kernel": "k", "repeats": 1, "grid": [4096, 1, 1], "programs": 4096, "sampled": 4, "planned": 4,
              "sample_error": 0.0, "options": {"num_warps": 4}, "unique_bytes": 3e9,
              "counts": {"load_bytes": 2e9, "store_bytes": 1e9, "loads": 1e6, "stores": 5e5, "dot_flops": {},
                         "ew_flops": 0.0, "sfu_ops": 0.0, "dot_tile": [0, 0, 0], "program_unique_bytes": 3e9}}
    record = {"ok": True, "launches": [launch], "library": []}
    now = stage_time(record, gpu_peaks.lookup("H100"))["est_us"]
    est = {"stages": {"examples/copy/stage1.py": {"ok": True, "record": record, "estimate_us": {"H100": 1.0},
                                                 "estimated_for": [8], "dtype": "float32"},
                      "examples/copy/stage2.py": _est(now / 1.4, [8])}}
    (tmp_path / "e.json").write_text(json.dumps(est))
    gpu = {"gpu": "NVIDIA H100 80GB HBM3", "examples": {"copy": {"shape": [8], "stages": {
        "stage1.py": {"median_ms": 1.5 * now / 1e3}, "stage2.py": {"median_ms": 3 * now / 1e3}}}}}
    res = rank.compare(gpu, rank.load_estimates(tmp_path / "e.json"))
    r = res["examples"]["examples/copy"]
    assert r["ratio"]["stage1.py"] == 1.5 and r["within"] == {"stage1.py": True, "stage2.py": False}
    assert res["summary"].startswith("within 2x: 1 of 2 stages")
