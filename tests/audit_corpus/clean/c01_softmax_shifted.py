"""Softmax with the row max subtracted by reassignment (x = x - max), fp32 math, masked -inf padding."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, x_ptr, stride_x, stride_out, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(out_ptr + row * stride_out + cols, (num / tl.sum(num, axis=0)).to(out_ptr.dtype.element_ty), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty_like(x)
    if x.numel():
        softmax_kernel[(m,)](out, x, x.stride(0), out.stride(0), n, BLOCK_N=triton.next_power_of_2(n))
    return out
