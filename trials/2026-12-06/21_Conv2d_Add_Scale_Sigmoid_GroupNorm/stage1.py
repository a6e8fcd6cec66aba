"""stage1.py of 21_Conv2d_Add_Scale_Sigmoid_GroupNorm: Stage 1: a direct, correct translation.

Four kernels, one per reference op group, each obviously correct:
  1. direct convolution (valid padding, stride 1): one program per (n, out_channel, block of output pixels),
     scalar loops over (ci, kh, kw), fp32 FMA accumulation (no tl.dot: exact fp32 like PyTorch's CPU conv);
  2. elementwise: y = sigmoid((conv + bias[c]) * scale[c]);
  3. GroupNorm statistics: one program per (n, group), two passes (mean, then centred variance);
  4. GroupNorm apply: out = (y - mean) * rstd * gamma[c] + beta[c].
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def conv2d_direct_kernel(x_ptr, w_ptr, b_ptr, out_ptr,
                         C_in, H, W, C_out, OH, OW,
                         sxn, sxc, sxh, sxw,
                         KS: tl.constexpr, BLOCK: tl.constexpr):
    pid_p = tl.program_id(0)
    co = tl.program_id(1).to(tl.int64)
    n = tl.program_id(2).to(tl.int64)
    offs = pid_p.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    P = OH * OW
    mask = offs < P
    oh = offs // OW
    ow = offs % OW
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for ci in range(0, C_in):
        for kh in range(0, KS):
            for kw in range(0, KS):
                xv = tl.load(x_ptr + n * sxn + ci * sxc + (oh + kh) * sxh + (ow + kw) * sxw,
                             mask=mask, other=0.0).to(tl.float32)
                wv = tl.load(w_ptr + ((co * C_in + ci) * KS + kh) * KS + kw).to(tl.float32)
                acc += xv * wv
    acc += tl.load(b_ptr + co).to(tl.float32)
    tl.store(out_ptr + (n * C_out + co) * P + offs, acc, mask=mask)


@triton.jit
def bias_scale_sigmoid_kernel(y_ptr, bias_ptr, scale_ptr, out_ptr, n_elements, C, P, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    c = (offs // P) % C
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(bias_ptr + c, mask=mask, other=0.0).to(tl.float32)
    s = tl.load(scale_ptr + c, mask=mask, other=0.0).to(tl.float32)
    z = (y + b) * s
    r = 1.0 / (1.0 + tl.exp(-z))
    tl.store(out_ptr + offs, r, mask=mask)


@triton.jit
def groupnorm_stats_kernel(y_ptr, mean_ptr, rstd_ptr, group_size, eps, BLOCK: tl.constexpr):
    # one program per (n, group); the group's elements are contiguous: [C/G channels x P pixels]
    g = tl.program_id(0).to(tl.int64)
    base = y_ptr + g * group_size
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, group_size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < group_size
        acc += tl.load(base + offs, mask=m, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / group_size
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, group_size, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < group_size
        v = tl.load(base + offs, mask=m, other=0.0).to(tl.float32)
        d = tl.where(m, v - mean, 0.0)
        acc2 += d * d
    var = tl.sum(acc2, axis=0) / group_size
    tl.store(mean_ptr + g, mean)
    tl.store(rstd_ptr + g, 1.0 / tl.sqrt(var + eps))


@triton.jit
def groupnorm_apply_kernel(y_ptr, mean_ptr, rstd_ptr, gamma_ptr, beta_ptr, out_ptr,
                           n_elements, C, P, CPG, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    nc = offs // P           # n * C + c
    c = nc % C
    n = nc // C
    G = C // CPG
    grp = n * G + c // CPG
    y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + grp, mask=mask, other=0.0)
    rstd = tl.load(rstd_ptr + grp, mask=mask, other=0.0)
    gam = tl.load(gamma_ptr + c, mask=mask, other=0.0).to(tl.float32)
    bet = tl.load(beta_ptr + c, mask=mask, other=0.0).to(tl.float32)
    out = (y - mean) * rstd * gam + bet
    tl.store(out_ptr + offs, out.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups, bias_shape, scale_shape):
        # Model's constructor, copied: the same parameter names let the validator load its weights.
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scale = nn.Parameter(torch.randn(scale_shape))
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        N, C_in, H, W = x.shape
        w = self.conv.weight.contiguous()
        C_out, _, KS, _ = w.shape
        OH, OW = H - KS + 1, W - KS + 1
        P = OH * OW
        G = self.group_norm.num_groups
        CPG = C_out // G
        out = torch.empty((N, C_out, OH, OW), dtype=x.dtype, device=x.device)
        if out.numel() == 0:
            return out
        conv = torch.empty((N, C_out, OH, OW), dtype=torch.float32, device=x.device)
        BLOCK = 1024
        grid = (triton.cdiv(P, BLOCK), C_out, N)
        conv2d_direct_kernel[grid](x, w, self.conv.bias, conv, C_in, H, W, C_out, OH, OW,
                                   x.stride(0), x.stride(1), x.stride(2), x.stride(3),
                                   KS=KS, BLOCK=BLOCK)
        n_el = conv.numel()
        y = torch.empty_like(conv)
        bias_scale_sigmoid_kernel[(triton.cdiv(n_el, BLOCK),)](
            conv, self.bias.contiguous(), self.scale.contiguous(), y, n_el, C_out, P, BLOCK=BLOCK)
        mean = torch.empty((N * G,), dtype=torch.float32, device=x.device)
        rstd = torch.empty((N * G,), dtype=torch.float32, device=x.device)
        groupnorm_stats_kernel[(N * G,)](y, mean, rstd, CPG * P, self.group_norm.eps, BLOCK=BLOCK)
        groupnorm_apply_kernel[(triton.cdiv(n_el, BLOCK),)](
            y, mean, rstd, self.group_norm.weight, self.group_norm.bias, out, n_el, C_out, P, CPG, BLOCK=BLOCK)
        return out
