"""Stage 1: a direct, correct translation. One Triton kernel computes every pooled output from scratch.

Each program owns BLOCK pooled outputs (flattened n, co, ph, pw). For each of the P x P conv outputs under one pooling
window it accumulates the C_in x K x K products in fp32 FMAs (no tl.dot: exact fp32 order, no TF32), adds the bias,
subtracts, applies hardswish, keeps the running max (NaN-propagating, as max_pool2d), then applies mish and stores.
Nothing but the pooled output touches memory; every input value is re-read from cache for each of the P x P x C_out
outputs that use it, so this is slow, but it is short and obviously right.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _hardswish(v):
    return v * tl.minimum(tl.maximum(v + 3.0, 0.0), 6.0) / 6.0


@triton.jit
def _mish(p):
    # p * tanh(softplus(p)) with tanh(log1p(t)) = t (t + 2) / (t (t + 2) + 2), t = exp(p): only exp, no overflow;
    # softplus is p itself above 20 (PyTorch's threshold), where tanh is 1 in fp32.
    t = tl.exp(tl.minimum(p, 20.0))
    q = t * (t + 2.0)
    return tl.where(p > 20.0, p, p * (q / (q + 2.0)))


@triton.jit
def conv_pool_naive_kernel(x_ptr, w_ptr, b_ptr, out_ptr, total, C_in, H, W, C_out, PH, PW, sub,
                           K: tl.constexpr, P: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    pw = offs % PW
    t = offs // PW
    ph = t % PH
    t = t // PH
    co = t % C_out
    n = t // C_out
    bias = tl.load(b_ptr + co, mask=mask, other=0.0).to(tl.float32)
    best = tl.full((BLOCK,), float("-inf"), tl.float32)
    for dy in tl.static_range(P):
        for dx in tl.static_range(P):
            oh = ph * P + dy
            ow = pw * P + dx
            acc = tl.zeros((BLOCK,), tl.float32)
            for ci in range(C_in):
                x_row = x_ptr + ((n * C_in + ci) * H + oh) * W + ow
                w_row = w_ptr + (co * C_in + ci) * (K * K)
                for kh in tl.static_range(K):
                    for kw in tl.static_range(K):
                        xv = tl.load(x_row + kh * W + kw, mask=mask, other=0.0).to(tl.float32)
                        wv = tl.load(w_row + kh * K + kw, mask=mask, other=0.0).to(tl.float32)
                        acc += xv * wv
            v = _hardswish(acc + bias - sub)
            best = tl.maximum(best, v, propagate_nan=tl.PropagateNan.ALL)
    tl.store(out_ptr + offs, _mish(best).to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, subtract_value, pool_kernel_size):
        # Model's constructor: the same parameter names let the validator load its weights.
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract_value = subtract_value
        self.pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x):
        x = x.contiguous()
        w, b = self.conv.weight.contiguous(), self.conv.bias.contiguous()
        N, C_in, H, W = x.shape
        C_out, _, K, _ = w.shape
        P = self.pool.kernel_size if isinstance(self.pool.kernel_size, int) else self.pool.kernel_size[0]
        PH, PW = (H - K + 1) // P, (W - K + 1) // P  # MaxPool2d's default: stride = kernel, floor
        out = torch.empty((N, C_out, PH, PW), dtype=x.dtype, device=x.device)
        total = out.numel()
        if total:
            BLOCK = 1024  # big blocks: the interpreter pays per operation, a GPU does not mind here
            conv_pool_naive_kernel[(triton.cdiv(total, BLOCK),)](
                x, w, b, out, total, C_in, H, W, C_out, PH, PW, float(self.subtract_value), K=K, P=P, BLOCK=BLOCK)
        return out
