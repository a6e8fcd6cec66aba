"""BUG (fp16 atomics): every element's share x / N is atomically added straight into the float16 output.
Near 100 a float16 step is 0.0625, so each ~0.1 addition rounds to a whole step: the sum drifts far
from the true mean (and on a GPU the order of the atomics varies as well)."""

import torch
import triton
import triton.language as tl


@triton.jit
def atomic_mean_kernel(x_ptr, out_ptr, stride_m, stride_n, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_m + cols * stride_n, mask=mask, other=0.0)
    share = (x.to(tl.float32) / n_cols).to(out_ptr.dtype.element_ty)
    rows = tl.full([BLOCK], 0, tl.int32) + row
    tl.atomic_add(out_ptr + rows, share, mask=mask)  # one atomic per element into x.dtype


def reference(x):
    m, n = x.shape
    out = torch.zeros(m, dtype=x.dtype, device=x.device)  # accumulates in x.dtype (float16)
    if m and n:
        atomic_mean_kernel[(m, triton.cdiv(n, 128))](x, out, x.stride(0), x.stride(1), n, BLOCK=128)
    return out
