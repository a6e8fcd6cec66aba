"""Correct: one program per (batch * channel plane, block of pixels); the channel's weight and bias loaded once per
program; every stride honoured."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def channel_affine_kernel(x_ptr, w_ptr, b_ptr, out_ptr, C, H, W, stride_xb, stride_xc, stride_xh, stride_xw,
                          stride_ob, stride_oc, stride_oh, stride_ow, BLOCK: tl.constexpr):
    plane = tl.program_id(0).to(tl.int64)
    b = plane // C
    c = plane % C
    p = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = p < H * W
    ph = (p // W).to(tl.int64)
    pw = (p % W).to(tl.int64)
    x = tl.load(x_ptr + b * stride_xb + c * stride_xc + ph * stride_xh + pw * stride_xw, mask=mask)
    y = x * tl.load(w_ptr + c) + tl.load(b_ptr + c)
    tl.store(out_ptr + b * stride_ob + c * stride_oc + ph * stride_oh + pw * stride_ow, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(channels))  # the reference's order: same seed, same values
        self.bias = nn.Parameter(torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        out = torch.empty((B, C, H, W), dtype=x.dtype, device=x.device)
        if out.numel():
            grid = (B * C, triton.cdiv(H * W, 1024))
            channel_affine_kernel[grid](x, self.weight, self.bias, out, C, H, W, *x.stride(), *out.stride(), BLOCK=1024)
        return out
