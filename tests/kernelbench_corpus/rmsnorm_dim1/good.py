"""Correct: one program per (batch, block of pixels); two loops over the features (sum of squares, then scale),
every stride honoured, so the reduction over the strided dim 1 stays coalesced along the pixels."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_dim1_kernel(x_ptr, out_ptr, C, H, W, eps, stride_xb, stride_xc, stride_xh, stride_xw,
                        stride_ob, stride_oc, stride_oh, stride_ow, BLOCK_P: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    p = tl.program_id(1) * BLOCK_P + tl.arange(0, BLOCK_P)
    mask = p < H * W
    ph = (p // W).to(tl.int64)
    pw = (p % W).to(tl.int64)
    x_pix = x_ptr + b * stride_xb + ph * stride_xh + pw * stride_xw
    o_pix = out_ptr + b * stride_ob + ph * stride_oh + pw * stride_ow
    sq = tl.zeros((BLOCK_P,), dtype=tl.float32)
    for c in range(0, C):
        x = tl.load(x_pix + c * stride_xc, mask=mask, other=0.0)
        sq += x * x
    inv = 1.0 / tl.sqrt(sq / C + eps)
    for c in range(0, C):
        x = tl.load(x_pix + c * stride_xc, mask=mask, other=0.0)
        tl.store(o_pix + c * stride_oc, x * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float):
        super().__init__()
        self.num_features, self.eps = num_features, eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, C, H, W = x.shape
        out = torch.empty((B, C, H, W), dtype=x.dtype, device=x.device)
        if out.numel():
            grid = (B, triton.cdiv(H * W, 256))
            rmsnorm_dim1_kernel[grid](x, out, C, H, W, self.eps, *x.stride(), *out.stride(), BLOCK_P=256)
        return out
