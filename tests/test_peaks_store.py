"""peaks_store.py: the host keeps the GPU peaks run_benchmark measured (the sandboxed worker may not write the
workspace); worker/benchmark/peaks.measure_peaks takes the host's entry instead of measuring again."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import torch

from pytorch_to_triton import peaks_store

H200 = {"copy_gbps": 4244.0, "read_gbps": 4400.0, "bf16_matmul_tflops": 685.0, "gpu": "NVIDIA H200"}


def test_remember_merges_and_known_reads_back(tmp_path: Path) -> None:
    assert peaks_store.known(tmp_path) == {}
    assert peaks_store.remember(tmp_path, {"NVIDIA H200|13.0": H200}) == ["NVIDIA H200|13.0"]
    assert peaks_store.remember(tmp_path, {"NVIDIA H100|13.0": {**H200, "copy_gbps": 3000.0}}) == ["NVIDIA H100|13.0"]
    assert set(peaks_store.known(tmp_path)) == {"NVIDIA H200|13.0", "NVIDIA H100|13.0"}
    assert peaks_store.known(tmp_path)["NVIDIA H200|13.0"]["copy_gbps"] == 4244.0
    assert [p.name for p in tmp_path.iterdir()] == ["peaks.json"]  # no temporary file left beside it


def test_what_a_candidate_could_forge_is_not_written(tmp_path: Path) -> None:
    """The worker runs user code: entries without the three positive, finite numbers, oversized ones and non-dicts
    are dropped, and a file that does not parse reads as empty."""
    for bad in ([1, 2], {"k": {"copy_gbps": 1.0}}, {"k": {**H200, "copy_gbps": float("inf")}},
                {"k": {**H200, "read_gbps": -1}}, {"k": {**H200, "pad": "x" * 5000}}, {7: H200}):
        assert peaks_store.remember(tmp_path, bad) == []
    assert not (tmp_path / "peaks.json").exists()
    (tmp_path / "peaks.json").write_text("{not json")
    assert peaks_store.known(tmp_path) == {}
    (tmp_path / "peaks.json").write_text(json.dumps({"ok|1": H200, "bad|1": {"copy_gbps": "fast"}}))
    assert list(peaks_store.known(tmp_path)) == ["ok|1"]


def test_the_worker_takes_the_hosts_entry_without_measuring() -> None:
    """measure_peaks with the host's entry for this GPU returns it and nothing to keep (no GPU touched: this runs on
    the CPU); an entry from before the read rate was measured is not taken."""
    from pytorch_to_triton.worker.benchmark.peaks import measure_peaks, peaks_key

    rt = SimpleNamespace(gpu_name="NVIDIA H200")
    key = peaks_key(rt)
    assert key == f"NVIDIA H200|{torch.version.cuda}"
    peaks, keep = measure_peaks({key: H200}, rt, lambda *a, **k: None)
    assert peaks == H200 and keep == {}
