"""A kernel that parks an intermediate in a global scratch buffer and reads it straight back."""

import torch
import triton
import triton.language as tl


@triton.jit
def swish_kernel(out_ptr, x_ptr, tmp_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(tmp_ptr + offs, tl.sigmoid(x), mask=mask)
    s = tl.load(tmp_ptr + offs, mask=mask, other=0.0)  # planted: global_roundtrip
    tl.store(out_ptr + offs, x * s, mask=mask)


def swish(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    tmp = torch.empty(x.shape, device=x.device, dtype=torch.float32)
    swish_kernel[(triton.cdiv(x.numel(), 1024),)](out, x, tmp, x.numel(), BLOCK=1024)
    return out
