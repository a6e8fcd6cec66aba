"""BUG (layout only): x is addressed through its strides but bias as `bias_ptr + cols`, as if contiguous. Correct on
every contiguous case; on the `strided` variant bias is a view of every other element of a wider buffer whose gaps
hold NaN, so the kernel reads NaN: `nonfinite` on medium:strided. The first fix must name the layout (the same values
passed contiguous), not exp/max/eps (issue 29: that hint sent a user after a numerics bug the kernel did not have)."""

import torch
import triton
import triton.language as tl


@triton.jit
def bias_softmax_kernel(x_ptr, bias_ptr, out_ptr, n_cols, stride_xr, stride_xc, stride_or, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_xr + cols * stride_xc, mask=mask, other=-float("inf"))
    b = tl.load(bias_ptr + cols, mask=mask, other=0.0)  # planted: bias's stride ignored
    z = x + b
    e = tl.exp(z - tl.max(z, axis=0))
    tl.store(out_ptr + row * stride_or + cols, e / tl.sum(e, axis=0), mask=mask)


def reference(x, bias):
    m, n = x.shape
    out = torch.empty((m, n), device=x.device, dtype=x.dtype)
    if m and n:
        bias_softmax_kernel[(m,)](x, bias, out, n, x.stride(0), x.stride(1), out.stride(0),
                                  BLOCK=triton.next_power_of_2(n))
    return out
