"""Correct for every non-empty vector; one block of triton.next_power_of_2(n) lanes, so n = 0 gives
tl.arange(0, 0): a robustness finding (empty)."""

import torch
import triton
import triton.language as tl


@triton.jit
def vec_softmax_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=float("-inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + offs, e / tl.sum(e, 0), mask=mask)


def reference(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    vec_softmax_kernel[(1,)](x, y, x.numel(), BLOCK=triton.next_power_of_2(x.numel()))
    return y
