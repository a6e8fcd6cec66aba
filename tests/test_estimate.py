"""The roofline ESTIMATE without a GPU (issue 29 item 7): counted bytes and tl.dot FLOPs equal the analytic counts,
a stage that rereads counts more, the scaling to full size, the GPU table, and run_benchmark / report showing it.

Fixtures: tests/estimate_fixtures (each file's docstring gives its analytic traffic).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from conftest import HAS_CUDA, pythonpath

from pytorch_to_triton import gpu_peaks, journal
from pytorch_to_triton.errors import UsageError
from pytorch_to_triton.roofline_estimate import times

FIX = Path(__file__).parent / "estimate_fixtures"
ROOT = Path(__file__).resolve().parent.parent
no_gpu = pytest.mark.skipif(HAS_CUDA, reason="run_benchmark times on a GPU; the estimate is its no-GPU answer")


def _interpreting_process() -> bool:
    """Whether kernels can run under the interpreter in this process: TRITON_INTERPRET is set, and triton is either
    not imported yet or was imported with it (its own @jit helpers, tl.max, tl.sum, tl.cdiv, are decorated then)."""
    if os.environ.get("TRITON_INTERPRET") != "1":
        return False
    if "triton" not in sys.modules:
        return True
    import triton.language.standard as st

    return type(st.max).__name__ == "InterpretedFunction"


def _own_process(test: Callable[..., None]) -> Callable[..., None]:
    """Run the test in a process of its own that sets TRITON_INTERPRET before triton is imported. The flag is read
    when triton.jit decorates, and an earlier test of the session may have imported triton without it (torch's
    FlopCounterMode does): an interpreted kernel calling tl.max then fails with "Cannot call @triton.jit'd outside of
    the scope of a kernel". Setting the flag in this process instead would leave triton interpreted for later tests."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        if _interpreting_process():
            test(*args, **kwargs)
            return
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               f"{Path(__file__).resolve()}::{test.__name__}"], cwd=ROOT,
                              env={**os.environ, "TRITON_INTERPRET": "1"}, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-4000:] + done.stderr[-2000:]

    return run


def _interpreted(monkeypatch: pytest.MonkeyPatch, name: str) -> ModuleType:
    """A fixture module whose @triton.jit kernels run under the interpreter (the flag is read at decoration: the
    test runs in a process of its own, see _own_process)."""
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    spec = importlib.util.spec_from_file_location(f"est_{name}", FIX / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---- counting under the interpreter ---------------------------------------------------------------------------
@_own_process
def test_vector_add_bytes_equal_the_analytic_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """n = 1000 with BLOCK 1024: 24 masked lanes move nothing, so loads are exactly 2 x 4 n and stores 4 n."""
    import torch

    from pytorch_to_triton.worker.device import interp_traffic

    mod = _interpreted(monkeypatch, "vadd_stage1")
    x, y = torch.randn(1000), torch.randn(1000)
    with interp_traffic.counting() as c:
        out = mod.reference(x, y)
    assert torch.equal(out, x + y)
    t = c.totals()
    assert (t["launches"], t["load_bytes"], t["store_bytes"], t["unique_bytes"]) == (1, 8000, 4000, 12000)
    assert c.launches[0].kernel == "add_kernel" and c.launches[0].grid == (1, 1, 1)


@_own_process
def test_softmax_one_pass_vs_recompute(monkeypatch: pytest.MonkeyPatch) -> None:
    """Softmax rows of 781 (BLOCK 1024): one pass loads 4 M N bytes; three passes load 12 M N; both store 4 M N and
    touch the same 8 M N distinct bytes."""
    import torch

    from pytorch_to_triton.worker.device import interp_traffic

    m, n = 5, 781
    x = torch.randn(m, n)
    counts = {}
    for name in ("softmax_one_pass", "softmax_recompute"):
        mod = _interpreted(monkeypatch, name)
        with interp_traffic.counting() as c:
            out = mod.reference(x)
        assert torch.allclose(out, torch.softmax(x, -1), atol=1e-6)
        counts[name] = c.totals()
    one, three = counts["softmax_one_pass"], counts["softmax_recompute"]
    assert one["load_bytes"] == 4 * m * n and one["store_bytes"] == 4 * m * n
    assert three["load_bytes"] == 3 * 4 * m * n and three["store_bytes"] == 4 * m * n
    assert one["unique_bytes"] == three["unique_bytes"] == 8 * m * n


@_own_process
def test_tl_dot_flops_by_precision(monkeypatch: pytest.MonkeyPatch) -> None:
    """2 M N K FLOPs, under the precision the GPU runs an fp32 dot in by default (tf32)."""
    import torch

    from pytorch_to_triton.worker.device import interp_traffic

    mod = _interpreted(monkeypatch, "matmul_tiled")
    a, b = torch.randn(64, 96), torch.randn(96, 32)
    with interp_traffic.counting() as c:
        mod.reference(a, b)
    assert c.totals()["dot_flops"] == {"tf32": 2.0 * 64 * 32 * 96}
    # A (64 x 96) is read once per column block (32 / 32 = 1), B (96 x 32) once per row block (64 / 32 = 2).
    assert c.totals()["load_bytes"] == 4 * (64 * 96 * 1 + 96 * 32 * 2)


def test_counting_unhooks_after_the_block(monkeypatch: pytest.MonkeyPatch) -> None:
    from triton.runtime import interpreter

    from pytorch_to_triton.worker.device import interp_traffic

    before = interpreter.InterpreterBuilder.create_masked_load
    with interp_traffic.counting():
        assert interpreter.InterpreterBuilder.create_masked_load is not before
        with pytest.raises(RuntimeError, match="already active"), interp_traffic.counting():
            pass
    assert interpreter.InterpreterBuilder.create_masked_load is before


# ---- GPU table and arithmetic ---------------------------------------------------------------------------------
def test_gpu_lookup_aliases_custom_and_refusal() -> None:
    assert gpu_peaks.lookup(None).name == "H200 SXM"
    assert gpu_peaks.lookup("h100").bandwidth_gbs == 3350
    assert gpu_peaks.lookup("RTX 4090").name == gpu_peaks.lookup("rtx4090").name == "RTX 4090"
    assert gpu_peaks.lookup("A100").peak("fp8") == 312  # no FP8 on an A100: the fp16 rate
    for g in gpu_peaks.GPUS:
        assert g.source and g.bandwidth_gbs > 0 and g.tflops["fp32"] > 0
    assert "4222" in gpu_peaks.lookup("h200").measured  # our own measurement beside the datasheet
    mine = gpu_peaks.lookup("lab:bw=1000,fp32=10,bf16=100")
    assert (mine.name, mine.bandwidth_gbs, mine.peak("bf16"), mine.peak("tf32")) == ("lab", 1000, 100, 10)
    with pytest.raises(UsageError, match="H100 SXM, A100 80GB, L4, RTX 4090"):
        gpu_peaks.lookup("B200")
    with pytest.raises(UsageError, match="needs at least bw"):
        gpu_peaks.lookup("lab:bf16=100")


def test_times_memory_and_dot_bound() -> None:
    h200 = gpu_peaks.lookup("h200")
    mem = times({"load_bytes": 8e9, "store_bytes": 4e9, "unique_bytes": 12e9, "dot_flops": {}}, h200)
    assert mem["bound"] == "memory" and mem["est_us"] == pytest.approx(12e9 / 4800e9 * 1e6)
    dot = times({"load_bytes": 1e6, "store_bytes": 0, "dot_flops": {"bf16": 989.4e12 * 1e-3}}, h200)
    assert dot["bound"] == "tl.dot" and dot["est_us"] == pytest.approx(1000.0)
    a100 = gpu_peaks.lookup("a100")
    x3 = times({"load_bytes": 0, "store_bytes": 0, "dot_flops": {"tf32x3": 156e12 * 1e-3}}, a100)
    assert x3["est_us"] == pytest.approx(3000.0)  # no measurement: three datasheet TF32 dots per tf32x3 dot
    # On Hopper the fp32-input rates are the H200's measured ones (a trial's stage 3 ranked tf32x3 2.3x ahead of ieee
    # by the datasheet; the H200 ran tf32x3 slower than ieee): 1 ms of ieee work must not look slower than tf32x3.
    f = 42.3e12 * 1e-3
    ieee = times({"load_bytes": 0, "store_bytes": 0, "dot_flops": {"ieee": f}}, h200)["est_us"]
    tf32x3 = times({"load_bytes": 0, "store_bytes": 0, "dot_flops": {"tf32x3": f}}, h200)["est_us"]
    assert ieee == pytest.approx(1000.0) and tf32x3 > ieee


# ---- run_benchmark without a GPU, and the report --------------------------------------------------------------
# The corpus command: a no-GPU benchmark fitted over several counted sizes (over a minute on 2 cores); the default
# command keeps the estimate end to end (test_cli_bench_without_gpu_prints_the_estimate), its ranking
# (test_softmax_one_pass_vs_recompute) and its counts.
@pytest.mark.corpus
@no_gpu
def test_no_gpu_benchmark_answers_an_estimate_side_by_side(tmp_path: Path) -> None:
    from pytorch_to_triton.service import Service

    for p in FIX.glob("softmax_*.py"):
        shutil.copy(p, tmp_path / p.name)
    svc = Service(tmp_path, device="cpu")
    try:
        rep = svc.benchmark(reference="softmax_reference.py",
                            candidates=["softmax_one_pass.py", "softmax_recompute.py"], gpu="L4")
    finally:
        svc.close()
    assert rep.ok and rep.verdict.startswith("ESTIMATE only (no GPU)") and not rep.timings
    est = {e["stage"]: e for e in rep.model_extra["estimate"]}
    one, three = est["softmax_one_pass.py"], est["softmax_recompute.py"]
    # counted at the bench shape halved to fit the interpreter (its own row width), fitted over the rows (issue 40)
    assert one["measured_sizes"] == [256, 391] and one["full_sizes"] == [4096, 781]
    assert one["counted"]["load_bytes"] == 4 * 256 * 391 and three["counted"]["load_bytes"] == 12 * 256 * 391
    assert one["scale"]["bytes"] == pytest.approx(4096 * 781 / (256 * 391))  # inputs + outputs grow with M N
    assert one["fit"]["sizes"] == ["dim0", "dim1"] and one["fit"]["held_back"]["max_relative_error"] < 1e-9
    assert one["scaled"]["load_bytes"] == pytest.approx(4 * 4096 * 781)
    assert three["times"]["est_us"] == pytest.approx(2 * one["times"]["est_us"])  # 16 vs 8 bytes per element
    assert "ESTIMATE µs on L4" in rep.summary and "| softmax_recompute.py |" in rep.summary
    assert "rank" in rep.summary and "bench softmax_reference.py" in rep.reproduce and "--gpu L4" in rep.reproduce
    md = journal.render_report(tmp_path, journal.task_id(tmp_path / "softmax_reference.py", tmp_path))
    assert "Roofline ESTIMATE per stage" in md and "ESTIMATE µs on H200 SXM" in md
    assert "| softmax_one_pass.py |" in md and "| softmax_recompute.py |" in md
    l4 = journal.render_report(tmp_path, journal.task_id(tmp_path / "softmax_reference.py", tmp_path), gpu="L4")
    assert "ESTIMATE µs on L4" in l4


# Long end-to-end run (over a minute on 2 cores): the corpus command; the default command keeps the no-GPU estimate
# end to end (test_no_gpu_benchmark_answers_an_estimate_side_by_side, test_cli_bench_without_gpu_prints_the_estimate).
@pytest.mark.corpus
@no_gpu
def test_a_dot_kernels_loads_scale_with_its_flops(tmp_path: Path) -> None:
    """A 32-tiled matmul rereads A once per column block and B once per row block: at the full 1024 x 2048 x 512 its
    loads are 4 (M K N / 32 + K N M / 32) bytes, which the fit over M, K, N reaches exactly from 256 x 256 x 256."""
    from pytorch_to_triton.service import Service

    for p in FIX.glob("matmul_*.py"):
        shutil.copy(p, tmp_path / p.name)
    svc = Service(tmp_path, device="cpu")
    try:
        rep = svc.benchmark(reference="matmul_reference.py", candidates=["matmul_tiled.py"])
    finally:
        svc.close()
    e = rep.model_extra["estimate"][0]
    m, k, n = 1024, 2048, 512
    assert e["measured_sizes"] == [256, 256, 256] and e["scaled"]["dot_flops"] == {"tf32": pytest.approx(2.0 * m * n * k)}
    assert e["scaled"]["load_bytes"] == pytest.approx(4 * (m * k * n / 32 + k * n * m / 32))
    # 268 MB requested at 4.8 TB/s (56 µs) outweighs 2.1 GFLOP of TF32 (26 µs at the H200's measured fp32-input tf32
    # rate): 32 x 32 tiles reread too much,
    # which is the signal to use bigger tiles.
    assert e["times"]["bound"] == "memory" and e["times"]["t_dot_us"] == pytest.approx(2.0 * m * n * k / 82.1e6)


@no_gpu
def test_cli_bench_without_gpu_prints_the_estimate(tmp_path: Path) -> None:
    for p in FIX.glob("vadd_*.py"):
        shutil.copy(p, tmp_path / p.name)
    env = {**os.environ, "PYTHONPATH": pythonpath()}
    out = subprocess.run([sys.executable, "-m", "pytorch_to_triton", "bench", "vadd_reference.py", "vadd_stage1.py",
                          "--gpu", "h100", "--workspace", str(tmp_path), "-q"], capture_output=True, text=True,
                         env=env, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ESTIMATE µs on H100 SXM" in out.stdout and ("| vadd_stage1.py | the benchmark's shape halved to fit the "
                                                       "interpreter | 50.33 MB") in out.stdout, out.stdout
    bad = subprocess.run([sys.executable, "-m", "pytorch_to_triton", "bench", "vadd_reference.py", "vadd_stage1.py",
                          "--gpu", "B200", "--workspace", str(tmp_path), "-q"], capture_output=True, text=True,
                         env=env, timeout=300, cwd=tmp_path)
    assert bad.returncode == 2 and "unknown gpu 'B200'" in bad.stderr


# The corpus command: a no-GPU benchmark fitted over several counted sizes (over a minute on 2 cores); the default
# command keeps the estimate end to end (test_cli_bench_without_gpu_prints_the_estimate), its ranking
# (test_softmax_one_pass_vs_recompute) and its counts.
@pytest.mark.corpus
@no_gpu
def test_kernelbench_problem_is_counted_shrunk_and_scaled(tmp_path: Path) -> None:
    """4096 x 4096 relu: counted at the validation's shrunk sizes, scaled to the problem's own by the I/O ratio
    (exact for an elementwise kernel: 4 B D bytes each way at full size)."""
    from pytorch_to_triton.service import Service

    for p in FIX.glob("kb_relu*.py"):
        shutil.copy(p, tmp_path / p.name)
    svc = Service(tmp_path, device="cpu")
    try:
        rep = svc.benchmark(reference="kb_relu.py", candidates=["kb_relu_stage1.py"], gpu="RTX 4090")
    finally:
        svc.close()
    e = rep.model_extra["estimate"][0]
    assert e["ok"], e
    assert e["full_sizes"] == {"batch_size": 4096, "dim": 4096} and e["measured_at"] == "the validated (shrunk) size"
    # no tl.dot: masked loads and stores count their live lanes, so nothing is re-counted past the 1024 block
    b, d = e["measured_sizes"]["batch_size"], e["measured_sizes"]["dim"]
    assert b * d < 4096 * 4096 and e["counted"]["load_bytes"] == 4 * b * d == e["counted"]["store_bytes"]
    assert e["scaled"]["load_bytes"] == pytest.approx(4 * 4096 * 4096)
    assert e["times"]["est_us"] == pytest.approx(8 * 4096 * 4096 / 1008e9 * 1e6)
    assert "ESTIMATE µs on RTX 4090" in rep.summary


def test_a_candidate_that_fails_is_a_row_not_an_estimate() -> None:
    from pytorch_to_triton.roofline_estimate import table

    lines = table([("stage2.py", {"ok": False, "measured_at": "the largest validation case",
                                  "error": "IndexError: out of range"})], gpu_peaks.lookup("l4"))
    assert lines[-1].startswith("| stage2.py | the largest validation case | not counted: IndexError")
    assert "ESTIMATE" not in lines[-1]


# Long end-to-end run (over a minute on 2 cores): the corpus command; the default command keeps the no-GPU estimate
# end to end (test_no_gpu_benchmark_answers_an_estimate_side_by_side, test_cli_bench_without_gpu_prints_the_estimate).
@pytest.mark.corpus
@no_gpu
def test_a_shrunk_size_inside_the_candidates_block_is_counted_again_past_it(tmp_path: Path) -> None:
    """A trial's attention at the shrunk seq_len 32 ran 128-wide tiles: the padded tl.dot work, scaled 10712x to
    full size, ranked its faster stage slower. A dot kernel is counted again where no varied size sits inside one
    of its blocks; here the tl.dot FLOPs then scale to exactly 2 M N K."""
    from pytorch_to_triton.service import Service

    for p in FIX.glob("kb_linear*.py"):
        shutil.copy(p, tmp_path / p.name)
    svc = Service(tmp_path, device="cpu")
    try:
        rep = svc.benchmark(reference="kb_linear.py", candidates=["kb_linear_stage1.py"])
    finally:
        svc.close()
    e = rep.model_extra["estimate"][0]
    assert e["ok"], e
    assert "grown past the candidate's blocks" in e["measured_at"], e["measured_at"]
    assert e["measured_sizes"]["batch_size"] == 512, e["measured_sizes"]  # 2 x BLOCK_M, from the shrunk 128
    assert any("inside one of the candidate's 256-wide blocks" in n for n in rep.notes), rep.notes
    assert e["scaled"]["dot_flops"]["ieee"] == pytest.approx(2.0 * 4096 ** 3, rel=1e-6)


# Long end-to-end run (over a minute on 2 cores): the corpus command; the default command keeps the no-GPU estimate
# end to end (test_no_gpu_benchmark_answers_an_estimate_side_by_side, test_cli_bench_without_gpu_prints_the_estimate).
@pytest.mark.corpus
@no_gpu
def test_the_sidecars_declared_work_is_the_estimates_reference(tmp_path: Path) -> None:
    """A trial's [bench] bytes/flops (the causal half of the FLOPs, no unused parameters) were ignored by the no-GPU
    benchmark ('sidecar: null'); they now stand for the reference's work at full size."""
    from pytorch_to_triton.service import Service

    for p in FIX.glob("kb_linear*.py"):
        shutil.copy(p, tmp_path / p.name)
    (tmp_path / "kb_linear.p2t.toml").write_text('[bench]\nbytes = "4 * batch_size * (in_features + out_features)"\n'
                                                 'flops = "2 * batch_size * in_features * out_features"\n')
    svc = Service(tmp_path, device="cpu")
    try:
        rep = svc.benchmark(reference="kb_linear.py", candidates=["kb_linear_stage1.py"])
    finally:
        svc.close()
    full = rep.model_extra["estimate"][0]["reference_full"]
    assert full["bytes"] == 4 * 4096 * 8192 and full["flops"] == 2 * 4096 ** 3, full
    assert full["bytes_source"].startswith("declared") and rep.sidecar and rep.sidecar["used"]
    assert any("[bench] declares" in n for n in rep.notes)


def test_the_fit_recovers_how_each_count_grows_with_each_size() -> None:
    """Issue 40 item 3: one counted run per size with that size doubled gives each count's exponent in it; the
    product of power laws extrapolates to the problem's own sizes."""
    from pytorch_to_triton.worker.benchmark.estimate import fit_counts, predict

    base_q = {"load_bytes": 100.0, "dot_flops:ieee": 50.0}
    base = {"m": 10, "k": 20}
    runs = {"m": ({"m": 20, "k": 20}, {"load_bytes": 200.0, "dot_flops:ieee": 100.0}),
            "k": ({"m": 10, "k": 40}, {"load_bytes": 400.0, "dot_flops:ieee": 100.0})}
    exps = fit_counts(base_q, base, runs)
    assert exps["m"]["load_bytes"] == pytest.approx(1.0) and exps["k"]["load_bytes"] == pytest.approx(2.0)
    at = predict(base_q, base, exps, {"m": 40, "k": 80})
    assert at["load_bytes"] == pytest.approx(100 * 4 * 16) and at["dot_flops:ieee"] == pytest.approx(50 * 4 * 4)


def test_pinned_sizes_are_a_count_point_never_the_full_size() -> None:
    """Issue 40: with [sizes] pinned for the interpreter, the estimate called them 'the full size itself' and was
    for them. It counts there and estimates for the problem's own sizes."""
    from pytorch_to_triton.worker.benchmark import estimate
    from pytorch_to_triton.worker.validation.loader import load_task

    task = load_task(FIX / "kb_relu.py", FIX / "kb_relu_stage1.py", None, None, "cpu")
    measured, full, _, where = estimate._plan_kernelbench(task, {"sizes": {"batch_size": 64, "dim": 256}}, "cpu")
    assert full == {"batch_size": 4096, "dim": 4096}, full
    assert measured == {"batch_size": 64, "dim": 256} and "the full size" not in where and "your sizes=" in where


def test_the_estimate_says_what_it_fitted_and_its_held_back_error() -> None:
    from pytorch_to_triton.roofline_estimate import fit_line

    rec = {"fit": {"sizes": ["batch_size", "dim"], "count_point": {"batch_size": 64, "dim": 385, "groups": 4},
                   "estimated_for": {"batch_size": 4096, "dim": 4096, "groups": 32},
                   "exponents": {"batch_size": {"load_bytes": 1.0}, "dim": {"load_bytes": 1.0}},
                   "held_back": {"sizes": {"batch_size": 96, "dim": 512}, "max_relative_error": 0.031}}}
    line = fit_line("stage1.py", rec)
    assert "fitted over batch_size, dim" in line and "3.1%" in line and "not fitted" in line and "groups" in line
    assert fit_line("stage2.py", {"fit_note": "no fit (x)"}) == "stage2.py: no fit (x)"


def test_the_bench_shape_is_halved_to_a_count_point_on_the_same_path() -> None:
    """Issue 40: a function-form reference is counted at its bench shape halved (the largest dimension above 256
    first, then batch and heads, the last dimension last), not at the largest validation case (softmax stage 3 took
    its long-row path at 3 x 20000); a halving the reference refuses is undone and that dimension left alone."""
    from pytorch_to_triton.worker.benchmark.estimate import halved_shape

    assert halved_shape((16384, 4096), lambda s: 2 * s[0] * s[1] <= 1 << 20) == (512, 1024)
    assert halved_shape((4, 32, 4096, 128), lambda s: 4 * s[0] * s[1] * s[2] * s[3] <= 1 << 20) == (1, 8, 256, 128)

    def gqa(s: tuple[int, ...]) -> bool:
        b, h, kv, t, d = s
        if h % kv:
            raise ValueError("heads must be a multiple of the kv heads")
        return 2 * (b * h * t * d + b * kv * t * d) <= 1 << 20

    assert halved_shape((4, 32, 8, 4096, 128), gqa) == (1, 8, 8, 256, 128)
    assert halved_shape((1 << 28,), lambda s: 3 * s[0] <= 1 << 20) == (1 << 18,)
    assert halved_shape((3,), lambda s: False) is None
