"""PLANTED BUG (stale cache): the output is cached by (data_ptr, shape), so new values written into the same input
tensor return the old answer (and a benchmark that reuses its inputs would time a dictionary lookup)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._cache = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.data_ptr(), tuple(x.shape), tuple(x.stride()))
        if key in self._cache:
            return self._cache[key]
        xc = x.contiguous()
        out = torch.empty_like(xc)
        n = xc.numel()
        if n:
            gelu_kernel[(triton.cdiv(n, 1024),)](xc, out, n, BLOCK=1024)
        self._cache[key] = out
        return out
