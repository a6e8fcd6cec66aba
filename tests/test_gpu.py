"""GPU-only behaviour (skipped without CUDA; run on the H200, results in benchmarks/RESULTS.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu
TASKS = Path(__file__).parent / "tasks"


def _ws(tmp_path: Path, src: str) -> None:
    (tmp_path / "reference.py").write_text((TASKS / "add_reference.py").read_text())
    (tmp_path / "good.py").write_text((TASKS / "add_stage1.py").read_text())
    (tmp_path / "cand.py").write_text(src)


ILLEGAL = '''
import torch, triton, triton.language as tl

@triton.jit
def bad_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs + (1 << 40))
    tl.store(out_ptr + offs, v)

def reference(x, y):
    out = torch.empty_like(x)
    bad_kernel[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    torch.cuda.synchronize()
    return out
'''

ASSERT = '''
import torch, triton, triton.language as tl

@triton.jit(debug=True)
def assert_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.device_assert(offs < 0, "planted device assert")
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

def reference(x, y):
    out = torch.empty_like(x)
    assert_kernel[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    torch.cuda.synchronize()
    return out
'''

OOM = '''
import torch

def reference(x, y):
    big = torch.empty(1 << 45, dtype=torch.uint8, device=x.device)
    return x + y
'''


@pytest.mark.parametrize("src,needle", [(ILLEGAL, "illegal"), (ASSERT, "assert"), (OOM, "memory")])
def test_cuda_faults_are_survived(tmp_path: Path, tmp_service, src: str, needle: str) -> None:
    _ws(tmp_path, src)
    rep = tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=1)
    assert not rep.ok
    text = " ".join(f.message for f in rep.candidates[0].findings).lower()
    assert needle in text or "crashed" in text, text
    again = tmp_service.validate(reference="reference.py", candidates=["good.py"], trials=1)
    assert again.ok, again.summary


def test_benchmark_on_gpu_reports_timings(service) -> None:
    rep = service.benchmark(reference="tests/tasks/add_reference.py", candidates=["tests/tasks/add_stage1.py"],
                            cases=[{"name": "n=2^24", "shape": [1 << 24]}], repeats=2)
    assert rep.ok, rep.summary
    cand = next(t for t in rep.timings if t.impl.endswith("add_stage1.py"))
    assert cand.median_ms and cand.median_ms > 0 and cand.gbps and cand.pct_peak_bw
    assert cand.speedup_vs_eager and rep.peaks["copy_gbps"] > 1000
    assert rep.environment["gpu"]


def test_benchmark_refuses_wrong_kernel(tmp_path: Path, tmp_service) -> None:
    _ws(tmp_path, (TASKS / "add_stage1.py").read_text().replace("x + y", "x - y"))
    rep = tmp_service.benchmark(reference="reference.py", candidates=["cand.py"],
                                cases=[{"name": "n", "shape": [1 << 20]}], repeats=1)
    cand = next(t for t in rep.timings if t.impl == "cand.py")
    assert not cand.ok and cand.median_ms is None and "wrong result" in (cand.error or "")


def _tf32x3_emulated(a, b, c):  # noqa: ANN001, ANN202 - numpy arrays
    """The interpreter's tf32x3 dot (worker/device/interp_tf32.py) over the fixture's K loop (BLOCK_K 16)."""
    import numpy as np
    import triton.language as tl
    from triton.runtime.interpreter import InterpreterBuilder, TensorHandle

    from pytorch_to_triton.worker.device import interp_tf32

    interp_tf32.install()
    builder = InterpreterBuilder.__new__(InterpreterBuilder)
    prec = type("P", (), {"name": "TF32x3"})()
    acc = TensorHandle(c.astype(np.float32), tl.float32)
    for k0 in range(0, a.shape[1], 16):
        acc = builder.create_dot(TensorHandle(np.ascontiguousarray(a[:, k0:k0 + 16]), tl.float32),
                                 TensorHandle(np.ascontiguousarray(b[k0:k0 + 16]), tl.float32), acc, prec, 0)
    return acc.data


def test_tf32x3_interpreter_matches_gpu_on_nan_and_inf(tmp_path: Path) -> None:
    """Issue 29 item 6: a NaN already in the accumulator and an inf operand give the same NaN/inf pattern and
    fp32-close values on the GPU's tf32x3 dot and in the interpreter's emulation."""
    import importlib.util

    import numpy as np
    import torch

    fix = Path(__file__).parent / "interp_fixtures"
    spec = importlib.util.spec_from_file_location("tf32x3_nan_acc", fix / "tf32x3_nan_acc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    g = torch.Generator().manual_seed(0)
    a, b, c = torch.randn(16, 64, generator=g), torch.randn(64, 16, generator=g), torch.randn(16, 16, generator=g)
    c[0] = float("nan")
    b[5, 3] = float("inf")  # aBig * inf is inf, aSmall * inf's NaN is the correction F32DotTC zeroes
    gpu = mod.reference(a.cuda(), b.cuda(), c.cuda()).cpu().numpy()
    emu = _tf32x3_emulated(a.numpy(), b.numpy(), c.numpy())
    assert np.array_equal(np.isnan(gpu), np.isnan(emu)), (np.isnan(gpu).sum(), np.isnan(emu).sum())
    assert np.array_equal(np.isinf(gpu), np.isinf(emu))
    assert np.isnan(gpu[0]).all()
    fin = np.isfinite(gpu)
    assert np.allclose(gpu[fin], emu[fin], rtol=1e-5, atol=1e-5), np.abs(gpu[fin] - emu[fin]).max()


def test_tf32x3_nan_accumulator_fixture_passes_on_gpu(tmp_path: Path, tmp_service) -> None:
    """The same fixture that passes under the interpreter passes run_validation on the GPU."""
    fix = Path(__file__).parent / "interp_fixtures"
    for name in ("tf32x3_nan_acc_reference.py", "tf32x3_nan_acc.py"):
        (tmp_path / name).write_text((fix / name).read_text())
    rep = tmp_service.validate(reference="tf32x3_nan_acc_reference.py", candidates=["tf32x3_nan_acc.py"], trials=1)
    assert rep.ok and not rep.interpreter, rep.summary


@pytest.mark.parametrize("example", ["swiglu", "geglu"])
def test_compiled_launcher_launches_are_counted(service, example: str) -> None:
    """The gallery's stage 3 launches through the compiled kernel's own launcher once a layout is cached
    (_FastLaunch); a validation must still see those launches (H100, 2026-12-06: `no_triton_launch` on the batched
    case before the recorder set Triton's launch hook)."""
    rep = service.validate(reference=f"examples/{example}/reference.py", candidates=[f"examples/{example}/stage3.py"],
                           trials=1)
    assert rep.ok, rep.summary
    assert not [f for f in rep.candidates[0].findings if f.kind == "no_triton_launch"]
