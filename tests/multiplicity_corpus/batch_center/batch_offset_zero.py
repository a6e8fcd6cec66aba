"""Bug (batch stride): every sample reads sample 0 (`b * 0` in the input's batch offset) and writes its own; any
case with two or more samples shows it."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def center_kernel(x_ptr, y_ptr, T, D, stride_xb, stride_xt, stride_yb, stride_yt, BLOCK_T: tl.constexpr,
                  BLOCK_D: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    offs_d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    d_mask = offs_d < D
    x_base = x_ptr + (b * 0) * stride_xb
    acc = tl.zeros((BLOCK_D,), dtype=tl.float32)
    for t0 in range(0, T, BLOCK_T):
        t = t0 + tl.arange(0, BLOCK_T)
        m = (t[:, None] < T) & d_mask[None, :]
        acc += tl.sum(tl.load(x_base + t[:, None] * stride_xt + offs_d[None, :], mask=m, other=0.0), axis=0)
    mean = acc / T
    for t0 in range(0, T, BLOCK_T):
        t = t0 + tl.arange(0, BLOCK_T)
        m = (t[:, None] < T) & d_mask[None, :]
        x = tl.load(x_base + t[:, None] * stride_xt + offs_d[None, :], mask=m, other=0.0)
        tl.store(y_ptr + b * stride_yb + t[:, None] * stride_yt + offs_d[None, :], x - mean[None, :], mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        B, T, D = x.shape
        y = torch.empty_like(x)
        if y.numel():
            center_kernel[(B, triton.cdiv(D, 64))](x, y, T, D, x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                                                    BLOCK_T=32, BLOCK_D=64)
        return y
