"""An online softmax over column chunks that forgot the running maximum."""

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_online_kernel(out_ptr, x_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    denom = tl.zeros((1,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        denom += tl.sum(tl.exp(x), axis=0)  # planted: unshifted_exp
    for c0 in range(0, n_cols, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        tl.store(out_ptr + row * stride + cols, tl.exp(x) / denom, mask=cols < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    softmax_online_kernel[(x.shape[0],)](out, x, x.stride(0), x.shape[1], BLOCK_N=2048)
    return out
