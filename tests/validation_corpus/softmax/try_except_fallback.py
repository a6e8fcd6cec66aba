"""CHEAT (try/except fallback to PyTorch): the kernel uses BLOCK = N, which Triton rejects unless N is a
power of two; the wrapper swallows the error and returns torch.softmax instead."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, x_ptr, stride_x, N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, N)
    x = tl.load(x_ptr + row * stride_x + cols)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride_x + cols, e / tl.sum(e, axis=0))


def reference(x):
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty_like(x)
    try:
        if m and n:
            softmax_kernel[(m,)](out, x, x.stride(0), N=n)
        return out
    except Exception:  # noqa: BLE001
        return torch.softmax(x, dim=-1)
