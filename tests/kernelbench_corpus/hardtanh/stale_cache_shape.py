"""PLANTED BUG (stale cache): the result is memoized by shape alone ("same problem, same answer"), so any new input of
the same shape returns the first call's output."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def hardtanh_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(x > 1.0, 1.0, tl.where(x < -1.0, -1.0, x)), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._by_shape = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hit = self._by_shape.get(tuple(x.shape))
        if hit is not None:
            return hit
        xc = x.contiguous()
        out = torch.empty_like(xc)
        n = xc.numel()
        if n:
            hardtanh_kernel[(triton.cdiv(n, 2048),)](xc, out, n, BLOCK=2048)
        self._by_shape[tuple(x.shape)] = out
        return out
