"""Per-head bias over exactly HEAD_DIM columns: tl.arange(0, HEAD_DIM) is in bounds without a mask."""

import torch
import triton
import triton.language as tl


@triton.jit
def head_bias_kernel(x_ptr, b_ptr, out_ptr, stride_row, HEAD_DIM: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    d = tl.arange(0, HEAD_DIM)
    x = tl.load(x_ptr + row * stride_row + d)
    b = tl.load(b_ptr + d)
    tl.store(out_ptr + row * stride_row + d, x + b)


def head_bias(x: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    x, b = x.contiguous(), b.contiguous()
    D = x.shape[-1]
    if D & (D - 1):
        raise ValueError(f"head_dim {D} must be a power of 2")
    out = torch.empty_like(x)
    rows = x.numel() // D
    head_bias_kernel[(rows,)](x, b, out, D, HEAD_DIM=D)
    return out
