"""BAD: the same stage as good.py with a channel-plane offset bug: the channel of an NCHW element is taken per row
(offs // OW) instead of per plane (offs // (OH * OW)), so most elements get another channel's bias. run_validation
fails it (mismatch); audit_kernel must call it a P0 (issue 45: the audit missed it, "Probes: 6 of 11 ran, none
failed")."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def bias_relu_hswish_kernel(y_ptr, b_ptr, out_ptr, n, C, OW, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ch = (offs // OW) % C  # BUG: a row, not a plane: the channel changes every OW elements
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
            bias_relu_hswish_kernel[(triton.cdiv(n, 256),)](y, self.conv.bias, out, n, y.shape[1], y.shape[3],
                                                            BLOCK=256)
        return out
