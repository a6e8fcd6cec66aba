"""BUG (missing mask): BLOCK = next_power_of_2(N) > N, but the load is unmasked, so each row's max and sum
take in the first elements of the next row (and past the end of the tensor for the last row)."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, x_ptr, stride_x, stride_o, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols)  # no mask=cols < n_cols, other=-inf
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride_o + cols, e / tl.sum(e, axis=0), mask=cols < n_cols)


def reference(x):
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty((m, n), dtype=x.dtype, device=x.device)
    if m and n:
        softmax_kernel[(m,)](out, x, x.stride(0), out.stride(0), n, BLOCK=triton.next_power_of_2(n))
    return out
