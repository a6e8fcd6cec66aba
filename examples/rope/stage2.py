"""Stage 2: one program per (batch, position) token rotates every head of it; strided, no copies.

Stage 1 re-read cos and sin for every head and copied q and k when they were views. Here a program loads the
token's cos/sin halves once and rotates a [heads, D/2] tile pair of that token, reading q and k through their
(batch, head, position) strides: the (B, S, H, D) -> (B, H, S, D) transpose view that HF attention makes costs no
copy. Math as stage 1 (see its docstring).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def rope_token_kernel(x_ptr, cos_ptr, sin_ptr, y_ptr, S, H, HALF, stride_xb, stride_xh, stride_xs, stride_yb,
                      stride_yh, stride_ys, stride_cb, stride_cs, BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr,
                      BACKWARD: tl.constexpr):
    tok = tl.program_id(0).to(tl.int64)
    b = tok // S
    s = tok % S
    cols = tl.arange(0, BLOCK_HALF)
    col_ok = cols < HALF
    cs = b * stride_cb + s * stride_cs
    c1 = tl.load(cos_ptr + cs + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    c2 = tl.load(cos_ptr + cs + HALF + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    s1 = tl.load(sin_ptr + cs + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    s2 = tl.load(sin_ptr + cs + HALF + cols, mask=col_ok, other=0.0).to(tl.float32)[None, :]
    heads = tl.arange(0, BLOCK_H).to(tl.int64)
    mask = (heads < H)[:, None] & col_ok[None, :]
    xo = b * stride_xb + s * stride_xs + heads[:, None] * stride_xh + cols[None, :]
    yo = b * stride_yb + s * stride_ys + heads[:, None] * stride_yh + cols[None, :]
    x1 = tl.load(x_ptr + xo, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(x_ptr + xo + HALF, mask=mask, other=0.0).to(tl.float32)
    if BACKWARD:
        y1 = x1 * c1 + x2 * s2
        y2 = x2 * c2 - x1 * s1
    else:
        y1 = x1 * c1 - x2 * s1
        y2 = x2 * c2 + x1 * s2
    tl.store(y_ptr + yo, y1.to(y_ptr.dtype.element_ty), mask=mask)
    tl.store(y_ptr + yo + HALF, y2.to(y_ptr.dtype.element_ty), mask=mask)


def _last_dim_contiguous(t: torch.Tensor) -> torch.Tensor:
    return t if t.stride(-1) == 1 else t.contiguous()


def _apply(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, backward: bool) -> torch.Tensor:
    x = _last_dim_contiguous(x)
    B, H, S, D = x.shape
    y = torch.empty_like(x)  # keeps x's layout when x is dense (the transposed HF view included)
    if x.numel():
        stride_cb = cos.stride(0) if cos.shape[0] > 1 else 0  # batch dim 1: one cos row set for every batch
        rope_token_kernel[(B * S,)](x, cos, sin, y, S, H, D // 2, x.stride(0), x.stride(1), x.stride(2),
                                    y.stride(0), y.stride(1), y.stride(2), stride_cb, cos.stride(1),
                                    BLOCK_H=triton.next_power_of_2(H), BLOCK_HALF=triton.next_power_of_2(D // 2),
                                    BACKWARD=backward)
    return y


class RoPEFunction(torch.autograd.Function):
    """RoPE on q and k with Triton forward and backward kernels."""

    @staticmethod
    def forward(ctx, q, k, cos, sin):
        cos, sin = _last_dim_contiguous(cos), _last_dim_contiguous(sin)
        if cos.stride() != sin.stride():
            cos, sin = cos.contiguous(), sin.contiguous()  # the kernel indexes both with cos's strides
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
