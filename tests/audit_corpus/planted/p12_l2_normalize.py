"""L2-normalize rows: x / ||x|| with no guard for a zero row."""

import torch
import triton
import triton.language as tl


@triton.jit
def l2_normalize_kernel(y_ptr, x_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    y = x / tl.sqrt(tl.sum(x * x, axis=0))  # planted: missing_eps
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def l2_normalize(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    l2_normalize_kernel[(x.shape[0],)](y, x, x.stride(0), x.shape[1], BLOCK_N=triton.next_power_of_2(x.shape[1]))
    return y
