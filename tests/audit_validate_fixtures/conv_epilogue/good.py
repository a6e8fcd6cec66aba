"""GOOD (a design choice, disclosed): the convolution stays in the library (F.conv2d without its bias: cuDNN on a
GPU), the epilogue (bias per channel, ReLU, hardswish) is one Triton kernel over the NCHW output."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def bias_relu_hswish_kernel(y_ptr, b_ptr, out_ptr, n, C, PLANE, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ch = (offs // PLANE) % C  # NCHW: one plane of OH * OW values per (image, channel)
    y = tl.load(y_ptr + offs, mask=mask, other=0.0) + tl.load(b_ptr + ch, mask=mask, other=0.0)
    y = tl.maximum(y, 0.0)
    tl.store(out_ptr + offs, y * tl.minimum(tl.maximum((y + 3.0) / 6.0, 0.0), 1.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight).contiguous()
        out = torch.empty_like(y)
        n = y.numel()
        if n:
            bias_relu_hswish_kernel[(triton.cdiv(n, 256),)](y, self.conv.bias, out, n, y.shape[1],
                                                            y.shape[2] * y.shape[3], BLOCK=256)
        return out
