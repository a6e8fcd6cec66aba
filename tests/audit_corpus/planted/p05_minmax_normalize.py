"""Min-max scaling per row: the padding value 0.0 wins both the max and the min."""

import torch
import triton
import triton.language as tl


@triton.jit
def minmax_kernel(out_ptr, x_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)  # planted: masked_load_other
    hi = tl.max(x, axis=0)
    lo = tl.min(x, axis=0)
    y = (x - lo) / (hi - lo + 1e-6)
    tl.store(out_ptr + row * stride + cols, y, mask=mask)


def minmax(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    m, n = x.shape
    minmax_kernel[(m,)](out, x, x.stride(0), n, BLOCK_N=triton.next_power_of_2(n))
    return out
