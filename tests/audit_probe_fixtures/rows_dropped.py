# label: bad example
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(out_ptr, x_ptr, stride_x, n_cols, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = cols[None, :] < n_cols
    x = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(z)
    tl.store(out_ptr + rows[:, None] * n_cols + cols[None, :], e / tl.sum(e, axis=1)[:, None], mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty_like(x)
    softmax_kernel[(m // 4,)](out, x, x.stride(0), n, BLOCK_M=4, BLOCK_N=triton.next_power_of_2(n))
    return out
