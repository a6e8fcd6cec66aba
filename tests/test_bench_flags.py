"""run_benchmark's host-bound / bimodal flags (pure functions; the GPU timing itself runs in benchmarks/)."""

from __future__ import annotations

import pytest

from pytorch_to_triton.worker.bench import _host_bound_flags


@pytest.mark.parametrize("row,graph,expect", [
    ({"median_ms": 0.14, "host_ms_per_call": 0.13, "min_ms": 0.07, "p20_ms": 0.13}, False, "host-bound"),
    ({"median_ms": 0.14, "host_ms_per_call": 0.02, "min_ms": 0.07, "p20_ms": 0.13}, False, "bimodal timing"),
    ({"median_ms": 0.14, "host_ms_per_call": 0.02, "min_ms": 0.13, "p20_ms": 0.135}, False, None),
    ({"median_ms": 0.14, "host_ms_per_call": 0.13, "min_ms": 0.07, "p20_ms": 0.13}, True, None),  # graph: no host
])
def test_host_bound_and_bimodal_timings_are_flagged(row: dict, graph: bool, expect: str | None) -> None:
    flags = _host_bound_flags(row, graph)
    assert (flags[0].split(":")[0] if flags else None) == expect, flags
