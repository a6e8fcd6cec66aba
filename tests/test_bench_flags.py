"""run_benchmark's flags and roofline figures (pure functions; the GPU timing itself runs in benchmarks/).

A flag must fire only on an implausible or badly measured number (faster than this GPU's roofline, an output
not written, a failed recheck, a host-bound or bimodal timing), never on a good memory-bound kernel.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from pytorch_to_triton.worker.benchmark import roofline
from pytorch_to_triton.worker.benchmark.bench import _recheck, _speedups
from pytorch_to_triton.worker.benchmark.peaks import (
    ROOFLINE_MARGIN,
    _host_bound_flags,
    plausibility_flags,
    roofline_floor_ms,
)
from pytorch_to_triton.worker.validation.poison import install as install_poison

# H200-like measured peaks: copy counts read + write bytes.
PEAKS = {"copy_gbps": 4000.0, "read_gbps": 4300.0, "bf16_matmul_tflops": 700.0}
L2 = 50 * 2**20


def _work(read: float, write: float, flops: float | None = None, src: str = "counted") -> roofline.Work:
    return roofline.Work(read, write, flops, src, "counted" if flops else None)


@pytest.mark.parametrize("row,graph,expect", [
    ({"median_ms": 0.14, "host_ms_per_call": 0.13, "min_ms": 0.07, "p20_ms": 0.13}, False, "host-bound"),
    ({"median_ms": 0.14, "host_ms_per_call": 0.02, "min_ms": 0.07, "p20_ms": 0.13}, False, "bimodal timing"),
    ({"median_ms": 0.14, "host_ms_per_call": 0.02, "min_ms": 0.13, "p20_ms": 0.135}, False, None),
    ({"median_ms": 0.14, "host_ms_per_call": 0.13, "min_ms": 0.07, "p20_ms": 0.13}, True, None),  # graph: no host
])
def test_host_bound_and_bimodal_timings_are_flagged(row: dict, graph: bool, expect: str | None) -> None:
    flags = _host_bound_flags(row, graph)
    assert (flags[0].split(":")[0] if flags else None) == expect, flags


def test_a_good_memory_bound_kernel_is_not_suspect_however_much_it_beats_eager() -> None:
    # rmsnorm 8192x8192 bf16 at 90% of copy bandwidth, 25x faster than a slow eager chain: no flag, only info.
    moved = 2 * 8192 * 8192 * 2
    med = moved / (0.9 * PEAKS["copy_gbps"]) / 1e6
    assert plausibility_flags(med, _work(moved / 2, moved / 2), PEAKS, L2, False, torch.bfloat16) == []
    rows = [{"impl": "eager", "ok": True, "median_ms": 25 * med, "repeats_ms": [25 * med] * 3},
            {"impl": "stage3.py", "ok": True, "median_ms": med, "repeats_ms": [med] * 3}]
    _speedups(rows, PEAKS)
    assert rows[1]["suspect"] == [] and "25.0x faster than eager" in rows[1]["info"][0]


def test_a_read_heavy_kernel_above_copy_bandwidth_is_plausible() -> None:
    # A reduction reads at the read rate, which beats a copy: 105% of copy is real, not a broken benchmark.
    read = 1 << 30
    med = read / (1.05 * PEAKS["copy_gbps"]) / 1e6
    assert plausibility_flags(med, _work(read, 4), PEAKS, L2, False, torch.float32) == []


def test_faster_than_the_bandwidth_roofline_is_flagged_with_what_to_do() -> None:
    read = write = 256 * 2**20
    floor, bound = roofline_floor_ms(_work(read, write), PEAKS, L2, False, torch.float32)
    assert bound == "bytes" and floor == pytest.approx((read + write - L2) / PEAKS["read_gbps"] / 1e6)
    assert plausibility_flags(floor * (1 - ROOFLINE_MARGIN / 2), _work(read, write), PEAKS, L2, False,
                              torch.float32) == []  # within the margin: noise, not a flag
    flags = plausibility_flags(floor * 0.5, _work(read, write), PEAKS, L2, False, torch.float32)
    assert len(flags) == 1 and flags[0].startswith("faster than the roofline:")
    assert "BYTES" in flags[0] and "validate on this case" in flags[0]


def test_faster_than_the_flops_roofline_is_flagged_and_8bit_gets_twice_the_ceiling() -> None:
    m = n = k = 8192
    w = _work(3 * m * n * 2, 0, 2.0 * m * n * k)
    floor, bound = roofline_floor_ms(w, PEAKS, L2, False, torch.bfloat16)
    assert bound == "flops" and floor == pytest.approx(2 * m * n * k / 700e12 * 1e3)
    assert plausibility_flags(floor * 1.1, w, PEAKS, L2, False, torch.bfloat16) == []  # 91% of peak: fine
    assert "TFLOP/s" in plausibility_flags(floor * 0.8, w, PEAKS, L2, False, torch.bfloat16)[0]
    # fp8 tensor cores run at twice the bf16 rate: 0.8x the bf16 floor is plausible for an 8-bit matmul
    assert plausibility_flags(floor * 0.8, w, PEAKS, L2, False, torch.float8_e4m3fn) == []


def test_cuda_graph_timings_may_read_from_l2() -> None:
    # No L2 flush between graph replays: a 16 MiB case can be served from L2, so no bandwidth floor applies.
    w = _work(16 * 2**20, 16 * 2**20)
    assert plausibility_flags(1e-4, w, PEAKS, L2, True, torch.float32) == []
    assert plausibility_flags(1e-4, w, PEAKS, L2, False, torch.float32)


def test_recheck_tells_an_unwritten_output_from_a_wrong_one() -> None:
    install_poison()
    x = torch.randn(1000)
    ref = lambda t: t * 2  # noqa: E731

    def half_written(t: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(t)  # poisoned with NaN during the recheck
        out[:500] = t[:500] * 2
        return out

    assert _recheck(ref, ref, [x], torch.float32, None, None) is None
    why = _recheck(half_written, ref, [x], torch.float32, None, None)
    assert why and why.startswith("output not written") and "500 output elements" in why
    why = _recheck(lambda t: t * 3, ref, [x], torch.float32, None, None)
    assert why and why.startswith("wrong on fresh inputs after timing")


class Matmul(torch.nn.Module):
    """KernelBench level-1 matmul form: no FLOPS or BYTES declared."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(64, 32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


def test_flops_are_counted_from_a_kernelbench_reference() -> None:
    m, k, n = 96, 80, 48
    a, b = torch.randn(m, k), torch.randn(k, n)
    out, flops = roofline.call_counting_flops(Matmul(), [a, b])
    assert flops == 2 * m * n * k and torch.equal(out, a @ b)
    work = roofline.work_of(object(), None, [a, b], [out], flops, Matmul())
    assert (work.flops, work.flops_source, work.bytes_source) == (2 * m * n * k, "counted", "counted")
    assert work.read_bytes == (m * k + k * n) * 4 and work.write_bytes == m * n * 4


def test_bytes_count_a_modules_parameters_and_elementwise_work_has_no_flops() -> None:
    model, x = Mlp(), torch.randn(8, 64)
    out, flops = roofline.call_counting_flops(model, [x])
    work = roofline.work_of(object(), None, [x], [out], flops, model)
    assert work.read_bytes == (8 * 64 + 64 * 32 + 32) * 4 and work.flops == 2 * 8 * 64 * 32
    _, none = roofline.call_counting_flops(lambda t: torch.softmax(t, -1) * 2, [x])
    elementwise = roofline.work_of(object(), None, [x], [x], none, None)
    assert none == 0 and elementwise.flops is None and elementwise.flops_source == "counted"


def test_declared_figures_win_over_counted_ones() -> None:
    class Ref:
        @staticmethod
        def BYTES(case, inputs):  # noqa: N802 - the task format's name
            return 1e6

        @staticmethod
        def FLOPS(case, inputs):  # noqa: N802
            return 5e9

    work = roofline.work_of(Ref, None, [torch.randn(4)], [torch.randn(4)], 123.0, None)
    assert (work.bytes, work.bytes_source, work.flops, work.flops_source) == (1e6, "declared", 5e9, "declared")
    assert not math.isnan(work.read_bytes)


def test_cross_entropy_stage3_at_its_measured_time_is_not_faster_than_the_roofline() -> None:
    # The gallery's stage 3 skips the rows whose target is ignore_index (about a fifth): counting every row's
    # logits made its 0.4041 ms (H200, 2026-12-04) look like 120 % of copy and raised the flag (issue 28).
    import importlib.util

    from pytorch_to_triton.worker.validation.tasks import Case

    path = Path(__file__).resolve().parent.parent / "examples" / "cross_entropy" / "reference.py"
    spec = importlib.util.spec_from_file_location("p2t_test_ce_reference", path)
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    n, v = ref.BENCH_SHAPES["bench"]
    _, target = ref.make_inputs(Case("bench", (n, 16), torch.bfloat16, "cpu", 0))  # the same targets at any V
    logits = torch.empty(n, v, dtype=torch.bfloat16, device="meta")  # BYTES reads only its shape and dtype
    loss = torch.empty((), dtype=torch.bfloat16)
    counted = int((target != ref.IGNORE_INDEX).sum())
    assert 0.7 * n < counted < 0.9 * n
    h200 = {"copy_gbps": 4246.0, "read_gbps": 4142.0, "bf16_matmul_tflops": 685.3}
    declared = roofline.work_of(ref, None, [logits, target], [loss], None, None)
    assert declared.bytes_source == "declared" and declared.bytes == counted * v * 2 + n * 8 + 2
    assert plausibility_flags(0.4041, declared, h200, L2, False, torch.bfloat16) == []
    every_row = roofline.work_of(object(), None, [logits, target], [loss], None, None)
    assert plausibility_flags(0.4041, every_row, h200, L2, False, torch.bfloat16)  # what fired before
