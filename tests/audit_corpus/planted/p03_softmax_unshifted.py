"""Softmax that exponentiates the raw row: overflows for inputs above ~88."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, x_ptr, stride_x, stride_out, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
    num = tl.exp(x)  # planted: unshifted_exp
    den = tl.sum(num, axis=0)
    tl.store(out_ptr + row * stride_out + cols, (num / den).to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    m, n = x.shape
    out = torch.empty_like(x)
    softmax_kernel[(m,)](out, x, x.stride(0), out.stride(0), n, BLOCK_N=triton.next_power_of_2(n))
    return out
