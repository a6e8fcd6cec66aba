"""BUG (fp16 accumulation overflow): the accumulator has the input's dtype; with float16 inputs the row
sum passes 65504 and becomes inf (and loses precision well before that)."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_mean_kernel(x_ptr, out_ptr, stride_m, stride_n, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=x_ptr.dtype.element_ty)  # should be tl.float32
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride_m + cols * stride_n, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0) / n_cols)


def reference(x):
    m, n = x.shape
    out = torch.empty(m, dtype=x.dtype, device=x.device)
    if m:
        row_mean_kernel[(m,)](x, out, x.stride(0), x.stride(1), n, BLOCK=128)
    return out
