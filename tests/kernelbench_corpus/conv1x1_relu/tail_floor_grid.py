"""PLANTED BUG (tail): the pixel grid is (H * W) // BLOCK_P, so the pixels of a last partial block are never
written. Invisible at the full size (256 * 256 pixels is a multiple of 64)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv1x1_relu_kernel(x_ptr, w_ptr, bias_ptr, out_ptr, C, O, H, W, stride_xb, stride_xc, stride_xh, stride_xw,
                        stride_wo, stride_wc, stride_ob, stride_oc, stride_oh, stride_ow,
                        BLOCK_O: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    offs_p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    offs_o = tl.program_id(2) * BLOCK_O + tl.arange(0, BLOCK_O)
    offs_c = tl.arange(0, BLOCK_C)
    p_mask = offs_p < H * W
    ph = (offs_p // W).to(tl.int64)
    pw = (offs_p % W).to(tl.int64)
    acc = tl.zeros((BLOCK_O, BLOCK_P), dtype=tl.float32)
    for c0 in range(0, C, BLOCK_C):
        c = c0 + offs_c
        w = tl.load(w_ptr + offs_o[:, None] * stride_wo + c[None, :] * stride_wc,
                    mask=(offs_o[:, None] < O) & (c[None, :] < C), other=0.0)
        x = tl.load(x_ptr + b * stride_xb + c[:, None] * stride_xc + ph[None, :] * stride_xh + pw[None, :] * stride_xw,
                    mask=(c[:, None] < C) & p_mask[None, :], other=0.0)
        acc += tl.dot(w, x, input_precision="ieee")
    y = acc + tl.load(bias_ptr + offs_o, mask=offs_o < O, other=0.0)[:, None]
    y = tl.where(y < 0.0, 0.0, y)  # relu that keeps NaN, as torch.relu does
    mask = (offs_o[:, None] < O) & p_mask[None, :]
    tl.store(out_ptr + b * stride_ob + offs_o[:, None] * stride_oc + ph[None, :] * stride_oh + pw[None, :] * stride_ow,
             y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        w = self.conv.weight  # (O, C, 1, 1)
        O = w.shape[0]
        out = torch.empty((B, O, H, W), dtype=x.dtype, device=x.device)
        if out.numel():
            grid = (B, max((H * W) // 64, 1), triton.cdiv(O, 64))
            conv1x1_relu_kernel[grid](x, w, self.conv.bias, out, C, O, H, W, *x.stride(), w.stride(0), w.stride(1),
                                      *out.stride(), BLOCK_O=64, BLOCK_P=64, BLOCK_C=32, num_warps=4)
        return out
