"""Stage 3: q and k in one launch, head tiles of bounded size, no autograd node when no gradient is needed.

One program per (batch, position) token, as stage 2, but it rotates the token's q heads and then its k heads in the
same program: cos and sin are read once per token instead of once per tensor, and a call is one launch (two with
backward), not two. Heads are walked in chunks of at most 2048 / (D/2) (32 heads at D = 128: a 4096-element tile
pair, 16 values per thread at 8 warps), so any head count fits in registers. Tile shapes are cached per
(H, H_kv, D); under no_grad (inference) the wrapper skips torch.autograd.Function. Math as stage 1.
"""

import functools
import os

import torch
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
# Elements per half-tile; under the interpreter a small one, so the head-chunk loop really loops on small cases.
HALF_TILE = 256 if INTERPRET else 2048


@triton.jit
def _rotate_heads(x_ptr, y_ptr, b, s, H, HALF, stride_xb, stride_xh, stride_xs, stride_yb, stride_yh, stride_ys,
                  c1, c2, s1, s2, cols, col_ok, BLOCK_H: tl.constexpr, BACKWARD: tl.constexpr):
    xb = x_ptr + b * stride_xb + s * stride_xs
    yb = y_ptr + b * stride_yb + s * stride_ys
    for h0 in range(0, H, BLOCK_H):
        heads = h0 + tl.arange(0, BLOCK_H).to(tl.int64)
        mask = (heads < H)[:, None] & col_ok[None, :]
        xo = heads[:, None] * stride_xh + cols[None, :]
        yo = heads[:, None] * stride_yh + cols[None, :]
        x1 = tl.load(xb + xo, mask=mask, other=0.0).to(tl.float32)
        x2 = tl.load(xb + xo + HALF, mask=mask, other=0.0).to(tl.float32)
        if BACKWARD:
            y1 = x1 * c1 + x2 * s2
            y2 = x2 * c2 - x1 * s1
        else:
            y1 = x1 * c1 - x2 * s1
            y2 = x2 * c2 + x1 * s2
        tl.store(yb + yo, y1.to(y_ptr.dtype.element_ty), mask=mask)
        tl.store(yb + yo + HALF, y2.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rope_qk_kernel(q_ptr, k_ptr, cos_ptr, sin_ptr, qo_ptr, ko_ptr, S, H, H_KV, HALF,
                   stride_qb, stride_qh, stride_qs, stride_kb, stride_kh, stride_ks,
                   stride_qob, stride_qoh, stride_qos, stride_kob, stride_koh, stride_kos, stride_cb, stride_cs,
                   BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr, BACKWARD: tl.constexpr):
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
    _rotate_heads(q_ptr, qo_ptr, b, s, H, HALF, stride_qb, stride_qh, stride_qs, stride_qob, stride_qoh, stride_qos,
                  c1, c2, s1, s2, cols, col_ok, BLOCK_H, BACKWARD)
    _rotate_heads(k_ptr, ko_ptr, b, s, H_KV, HALF, stride_kb, stride_kh, stride_ks, stride_kob, stride_koh,
                  stride_kos, c1, c2, s1, s2, cols, col_ok, BLOCK_H, BACKWARD)


@functools.lru_cache(maxsize=256)
def _tile(H: int, H_kv: int, D: int) -> tuple[int, int, int]:
    """(BLOCK_H, BLOCK_HALF, num_warps) for this head count and head dim."""
    block_half = triton.next_power_of_2(D // 2)
    block_h = min(triton.next_power_of_2(max(H, H_kv)), max(1, HALF_TILE // block_half))
    return block_h, block_half, 8 if block_h * block_half >= 2048 else 4


def _last_dim_contiguous(t: torch.Tensor) -> torch.Tensor:
    return t if t.stride(-1) == 1 else t.contiguous()


def _apply(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, backward: bool):
    q, k = _last_dim_contiguous(q), _last_dim_contiguous(k)
    B, H, S, D = q.shape
    H_kv = k.shape[1]
    qo, ko = torch.empty_like(q), torch.empty_like(k)  # keep the inputs' layout when dense (HF's transposed view)
    if B * S and D:
        block_h, block_half, warps = _tile(H, H_kv, D)
        stride_cb = cos.stride(0) if cos.shape[0] > 1 else 0  # batch dim 1: one cos row set for every batch
        rope_qk_kernel[(B * S,)](q, k, cos, sin, qo, ko, S, H, H_kv, D // 2, *q.stride()[:3], *k.stride()[:3],
                                 *qo.stride()[:3], *ko.stride()[:3], stride_cb, cos.stride(1), BLOCK_H=block_h,
                                 BLOCK_HALF=block_half, BACKWARD=backward, num_warps=warps)
    return qo, ko


def _cos_sin(cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    cos, sin = _last_dim_contiguous(cos), _last_dim_contiguous(sin)
    if cos.stride() != sin.stride():
        cos, sin = cos.contiguous(), sin.contiguous()  # the kernel indexes both with cos's strides
    return cos, sin


class RoPEFunction(torch.autograd.Function):
    """RoPE on q and k with Triton forward and backward kernels."""

    @staticmethod
    def forward(ctx, q, k, cos, sin):
        cos, sin = _cos_sin(cos, sin)
        ctx.save_for_backward(cos, sin)
        return _apply(q, k, cos, sin, False)

    @staticmethod
    def backward(ctx, dq, dk):
        cos, sin = ctx.saved_tensors
        dq_in, dk_in = _apply(dq, dk, cos, sin, True)
        return dq_in, dk_in, None, None


def rope(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor):
    """(q_embed, k_embed), differentiable in q and k."""
    if (q.dim() != 4 or k.dim() != 4 or q.shape[-1] % 2 or k.shape[0] != q.shape[0] or k.shape[2:] != q.shape[2:]
            or cos.dim() != 3 or cos.shape != sin.shape or cos.shape[1:] != q.shape[2:]):
        raise ValueError(f"expected q (B, H, S, D), k (B, H_kv, S, D), cos and sin (B or 1, S, D) with D even; got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(cos.shape)}, {tuple(sin.shape)}")
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad):
        return RoPEFunction.apply(q, k, cos, sin)
    return _apply(q, k, *_cos_sin(cos, sin), False)  # inference: no autograd node (less host time per call)
