"""Stage 1: one program per row, the whole row in one power-of-2 block: max, then log(sum(exp(x - max)))."""

import torch
import triton
import triton.language as tl


@triton.jit
def logsumexp_kernel(x_ptr, out_ptr, stride_row, stride_col, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + row * stride_row + cols * stride_col, mask=cols < N, other=-float("inf")).to(tl.float32)
    m = tl.max(x, axis=0)
    m = tl.where(m == -float("inf"), 0.0, m)  # N = 0 (or an all -inf row): sum is 0, result -inf, no NaN
    s = tl.sum(tl.exp(x - m), axis=0)
    tl.store(out_ptr + row, (m + tl.log(s)).to(out_ptr.dtype.element_ty))


def logsumexp(x: torch.Tensor) -> torch.Tensor:
    """logsumexp over the last dim of a 2-D tensor."""
    if x.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got shape {tuple(x.shape)}")
    M, N = x.shape
    out = torch.empty((M,), dtype=x.dtype, device=x.device)
    if M:
        block = max(triton.next_power_of_2(N), 16)
        logsumexp_kernel[(M,)](x, out, x.stride(0), x.stride(1), N, BLOCK_N=block, num_warps=8 if block >= 4096 else 4)
    return out
