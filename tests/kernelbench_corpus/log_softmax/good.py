"""Correct: one program per row; an online max/sum pass over column blocks (masked lanes -inf), then a write pass."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def log_softmax_kernel(x_ptr, out_ptr, N, stride_xr, stride_xc, stride_or, stride_oc, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK,), dtype=tl.float32)
    for c0 in range(0, N, BLOCK):
        c = c0 + cols
        x = tl.load(x_ptr + row * stride_xr + c * stride_xc, mask=c < N, other=float("-inf"))
        # A NaN must stick in its lane (torch gives a NaN row); tl.maximum may drop it, e.g. against a masked -inf.
        m_new = tl.where(m != m, m, tl.where(x != x, x, tl.maximum(m, x)))
        # lanes still at -inf (nothing seen yet) keep s = 0 instead of computing exp(-inf - -inf) = nan
        s = tl.where(m_new == float("-inf"), 0.0, s * tl.exp(m - m_new) + tl.exp(x - m_new))
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - row_max)), axis=0)
    lse = row_max + tl.log(total)
    for c0 in range(0, N, BLOCK):
        c = c0 + cols
        x = tl.load(x_ptr + row * stride_xr + c * stride_xc, mask=c < N, other=0.0)
        tl.store(out_ptr + row * stride_or + c * stride_oc, x - lse, mask=c < N)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        M, N = x.shape
        out = torch.empty((M, N), dtype=x.dtype, device=x.device)
        if out.numel():
            log_softmax_kernel[(M,)](x, out, N, x.stride(0), x.stride(1), out.stride(0), out.stride(1), BLOCK=1024)
        return out
