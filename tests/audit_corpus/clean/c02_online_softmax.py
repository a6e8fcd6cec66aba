"""Online softmax over chunks: running max m, rescaled running sum d, exp2 of the shifted values."""

import torch
import triton
import triton.language as tl

LOG2E = tl.constexpr(1.4426950408889634)


@triton.autotune(configs=[triton.Config({"BLOCK_N": 1024}, num_warps=4), triton.Config({"BLOCK_N": 4096}, num_warps=8)],
                 key=["n_cols"])
@triton.jit
def softmax_online_kernel(out_ptr, x_ptr, stride, n_cols, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride
    m = tl.full((1,), -float("inf"), dtype=tl.float32)
    d = tl.zeros((1,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32) * LOG2E
        m_new = tl.maximum(m, tl.max(x, axis=0))
        d = d * tl.exp2(m - m_new) + tl.sum(tl.exp2(x - m_new), axis=0)
        m = m_new
    for c0 in range(0, n_cols, BLOCK_N):
        cols = c0 + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        tl.store(out_ptr + row * stride + cols, tl.exp2(x * LOG2E - m) / d, mask=cols < n_cols)


def softmax(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    if x.numel():
        softmax_online_kernel[(x.shape[0],)](out, x, x.stride(0), x.shape[1])
    return out
