"""Row mean whose padding is -inf (copied from a max kernel): every padded row sums to -inf."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_mean_kernel(out_ptr, x_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=float("-inf"))  # planted: masked_load_other
    total = tl.sum(x.to(tl.float32), axis=0)
    tl.store(out_ptr + row, total / n_cols)


def row_mean(x: torch.Tensor) -> torch.Tensor:
    m, n = x.shape
    out = torch.empty((m,), device=x.device, dtype=torch.float32)
    row_mean_kernel[(m,)](out, x, x.stride(0), n, BLOCK_N=triton.next_power_of_2(n))
    return out
