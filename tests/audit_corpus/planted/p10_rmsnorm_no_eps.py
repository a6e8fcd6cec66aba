"""RMSNorm without epsilon: a row of zeros divides by zero."""

import torch
import triton
import triton.language as tl


@triton.jit
def rms_norm_kernel(y_ptr, x_ptr, w_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.rsqrt(tl.sum(x * x, axis=0) / n_cols)  # planted: missing_eps
    tl.store(y_ptr + row * stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


def rms_norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    rms_norm_kernel[(m,)](y, x, w.contiguous(), x.stride(0), n, BLOCK_N=triton.next_power_of_2(n))
    return y
