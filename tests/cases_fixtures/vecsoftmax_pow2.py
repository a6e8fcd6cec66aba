"""Correct for every non-empty vector; its block is min(triton.next_power_of_2(n), 4096) lanes, so n = 0 gives
tl.arange(0, 0), which does not compile: a robustness finding (empty)."""

import torch
import triton
import triton.language as tl


@triton.jit
def vec_softmax_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=float("-inf"))
        m_new = tl.maximum(m, x)
        s = tl.where(m_new == float("-inf"), 0.0, s * tl.exp(m - m_new) + tl.exp(x - m_new))
        m = m_new
    mx = tl.max(m, 0)
    total = tl.sum(s * tl.exp(m - mx), 0)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=float("-inf"))
        tl.store(y_ptr + offs, tl.exp(x - mx) / total, mask=offs < n)


def reference(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    vec_softmax_kernel[(1,)](x, y, x.numel(), BLOCK=min(triton.next_power_of_2(x.numel()), 4096))
    return y
