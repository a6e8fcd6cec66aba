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
