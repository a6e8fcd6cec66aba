"""TOLERANCES as a function of the case: the size-dependent rule is applied per case, by the validator."""

from __future__ import annotations

from pathlib import Path

REFERENCE = '''
SHAPES = {"short": (64,), "long": (65536,)}


def _float32_tolerance(case):
    # atol grows with the length: 1e-4 at 64 elements, 1e-2 at 65536
    return 1e-4, 1e-4 if case.shape[0] < 1024 else 1e-2


TOLERANCES = {"float32": _float32_tolerance}


def make_inputs(case):
    (n,) = case.shape
    return (case.randn(n),)


def reference(x):
    return x * 2
'''

# Off by 1e-3 everywhere: inside the long case's atol, outside the short case's.
CANDIDATE = '''
import torch, triton, triton.language as tl


@triton.jit
def twice_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2 + 1e-3, mask=mask)


def reference(x):
    out = torch.empty_like(x)
    twice_kernel[(triton.cdiv(x.numel(), 1024),)](x, out, x.numel(), BLOCK=1024)
    return out
'''


def test_case_dependent_tolerance_is_applied_per_case(tmp_path: Path, tmp_service) -> None:
    (tmp_path / "reference.py").write_text(REFERENCE)
    (tmp_path / "cand.py").write_text(CANDIDATE)
    rep = tmp_service.validate(reference="reference.py", candidates=["cand.py"], trials=1)
    cases = {c.name: c for c in rep.candidates[0].cases}
    assert not rep.ok
    assert not cases["short"].ok and cases["long"].ok, {n: (c.ok, c.atol) for n, c in cases.items()}


def test_tolerance_widens_only_when_pytorch_itself_misses_and_nothing_is_declared() -> None:
    """A candidate exactly as accurate as PyTorch passes; a declared tolerance, or a non-finite error, never widens."""
    import math

    import torch

    from pytorch_to_triton.worker.validation import compare as cmp

    f32 = torch.float32
    assert cmp.widen_for_native(f32, {}, 1e-4, 1e-4, 5e-5) == (1e-4, 1e-4, False)  # PyTorch within the default
    assert cmp.widen_for_native(f32, {}, 1e-4, 1e-4, 2.25e-3) == (1e-4, 4.5e-3, True)  # fp32 matmul, K=8192
    assert cmp.widen_for_native(f32, {"float32": (1e-5, 1e-5)}, 1e-5, 1e-5, 2.25e-3)[2] is False  # declared wins
    assert cmp.widen_for_native(f32, {}, 1e-4, 1e-4, math.inf)[2] is False  # an overflow never opens the gate
    assert cmp.widen_for_native(f32, {}, 1e-4, 1e-4, math.nan)[2] is False
    assert cmp.widen_for_native(torch.int32, {}, 0.0, 0.0, 3.0)[2] is False
    # the widened gate still catches a bug 100x further out than PyTorch's own error
    exact = torch.randn(4096, dtype=torch.float64)
    as_torch = exact + 2.0e-3 * torch.sign(torch.randn(4096, dtype=torch.float64))
    buggy = exact + 0.4
    rtol, atol, _ = cmp.widen_for_native(f32, {}, 1e-4, 1e-4, 2.25e-3)
    assert cmp.compare(as_torch.float(), exact, rtol, atol)["ok"]
    assert not cmp.compare(buggy.float(), exact, rtol, atol)["ok"]
