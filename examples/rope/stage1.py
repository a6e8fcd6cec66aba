"""Stage 1: one program per (batch, head, position) row, contiguous copies, forward and backward.

With x1, x2 the two halves of a row and c1, c2, s1, s2 the halves of cos and sin:
    forward   y1 = x1 c1 - x2 s1,   y2 = x2 c2 + x1 s2
    backward dx1 = dy1 c1 + dy2 s2, dx2 = dy2 c2 - dy1 s1   (the transpose of the rotation)
All four halves of cos and sin are read, so any cos/sin tensor is handled (HF's have c1 = c2 and s1 = s2).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def rope_row_kernel(x_ptr, cos_ptr, sin_ptr, y_ptr, H, S, stride_cb, HALF, BLOCK: tl.constexpr,
                    BACKWARD: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # row = (b * H + h) * S + s of a contiguous (B, H, S, D) tensor
    s = row % S
    b = row // (H * S)
    cols = tl.arange(0, BLOCK)
    mask = cols < HALF
    D = 2 * HALF
    x1 = tl.load(x_ptr + row * D + cols, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + row * D + HALF + cols, mask=mask, other=0.0).to(tl.float32)
    cs = b * stride_cb + s * D
    c1 = tl.load(cos_ptr + cs + cols, mask=mask, other=0.0).to(tl.float32)
    c2 = tl.load(cos_ptr + cs + HALF + cols, mask=mask, other=0.0).to(tl.float32)
    s1 = tl.load(sin_ptr + cs + cols, mask=mask, other=0.0).to(tl.float32)
    s2 = tl.load(sin_ptr + cs + HALF + cols, mask=mask, other=0.0).to(tl.float32)
    if BACKWARD:
        y1 = x1 * c1 + x2 * s2
        y2 = x2 * c2 - x1 * s1
    else:
        y1 = x1 * c1 - x2 * s1
        y2 = x2 * c2 + x1 * s2
    tl.store(y_ptr + row * D + cols, y1.to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(y_ptr + row * D + HALF + cols, y2.to(y_ptr.dtype.element_ty), mask=mask)


def _apply(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, backward: bool) -> torch.Tensor:
    x = x.contiguous()
    B, H, S, D = x.shape
    y = torch.empty_like(x)
    if x.numel():
        stride_cb = cos.stride(0) if cos.shape[0] > 1 else 0  # batch dim 1: one cos row set for every batch
        rope_row_kernel[(B * H * S,)](x, cos, sin, y, H, S, stride_cb, D // 2,
                                      BLOCK=triton.next_power_of_2(D // 2), BACKWARD=backward)
    return y


class RoPEFunction(torch.autograd.Function):
    """RoPE on q and k with Triton forward and backward kernels."""

    @staticmethod
    def forward(ctx, q, k, cos, sin):
        cos, sin = cos.contiguous(), sin.contiguous()
        ctx.save_for_backward(cos, sin)
        return _apply(q, cos, sin, False), _apply(k, cos, sin, False)

    @staticmethod
    def backward(ctx, dq, dk):
        cos, sin = ctx.saved_tensors
        return _apply(dq, cos, sin, True), _apply(dk, cos, sin, True), None, None


def rope(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
    """(q_embed, k_embed), differentiable in q and k."""
    if q.dim() != 4 or k.dim() != 4 or q.shape[-1] % 2 or cos.dim() != 3 or cos.shape != sin.shape:
        raise ValueError(f"expected q (B, H, S, D), k (B, H_kv, S, D), cos and sin (B or 1, S, D) with D even; got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(cos.shape)}, {tuple(sin.shape)}")
    return RoPEFunction.apply(q, k, cos, sin)
