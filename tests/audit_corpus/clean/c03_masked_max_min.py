"""Row max and min with the identities as padding: -inf for max, +inf for min; the sum pads with 0."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_stats_kernel(max_ptr, min_ptr, sum_ptr, x_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    hi = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    lo = tl.load(x_ptr + row * stride + cols, mask=mask, other=float("inf"))
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(max_ptr + row, tl.max(hi, axis=0))
    tl.store(min_ptr + row, tl.min(lo, axis=0))
    tl.store(sum_ptr + row, tl.sum(x, axis=0))


def row_stats(x: torch.Tensor):
    m, n = x.shape
    mx = torch.empty((m,), device=x.device, dtype=x.dtype)
    mn = torch.empty((m,), device=x.device, dtype=x.dtype)
    sm = torch.empty((m,), device=x.device, dtype=torch.float32)
    if m:
        row_stats_kernel[(m,)](mx, mn, sm, x, x.stride(0), n, BLOCK_N=triton.next_power_of_2(n))
    return mx, mn, sm
