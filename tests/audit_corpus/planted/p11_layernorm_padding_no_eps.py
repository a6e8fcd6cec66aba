"""LayerNorm whose variance sums the padded lanes (they hold -mean) and whose 1/sqrt has no epsilon."""

import torch
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(y_ptr, x_ptr, w_ptr, b_ptr, stride, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = x - mean
    var = tl.sum(xc * xc, axis=0) / N  # planted: masked_lanes_in_reduction
    rstd = 1.0 / tl.sqrt(var)  # planted: missing_eps
    w = tl.load(w_ptr + cols, mask=mask, other=1.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * stride + cols, (xc * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    m, n = x.shape
    y = torch.empty_like(x)
    layer_norm_kernel[(m,)](y, x, w.contiguous(), b.contiguous(), x.stride(0), n, BLOCK_N=triton.next_power_of_2(n))
    return y
