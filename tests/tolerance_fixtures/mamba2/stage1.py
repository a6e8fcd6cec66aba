"""Mamba2 SSD forward (reference.py) in fp32 Triton: three kernels, each fp32 tl.dot in IEEE precision.

1. ssd_chunk_state_kernel, one program per (batch, head, chunk): the cumulative sum of A in the chunk (stored for
   3.), and the chunk's own state  sum_l exp(A_cum[last] - A_cum[l]) * X[l]^T B[l]  (d_head x d_state).
2. ssd_state_passing_kernel, one program per (batch, head): the state entering each chunk, the recurrence
   S[z+1] = exp(total of chunk z) * S[z] + own state of chunk z from S[0] = 0 (the reference's segsum over chunk
   totals, unrolled).
3. ssd_chunk_output_kernel, one program per (batch, head, chunk):
   Y = ((C B^T) * exp(segsum(A_cum))) X  (the diagonal block, causal) + (C S^T) * exp(A_cum)  (the state).
Every size is masked (odd, 1 or 0 sizes run too); tl.dot needs 16 or more per dimension, hence the minimum blocks.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ssd_chunk_state_kernel(x_ptr, a_ptr, b_ptr, acum_ptr, st_ptr, H, T, NC, L, P, N,
                           stride_xb, stride_xt, stride_xh, stride_xp,
                           BLOCK_L: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_bh = tl.program_id(0)
    c = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    offs_l = tl.arange(0, BLOCK_L)
    offs_p = tl.arange(0, BLOCK_P)
    offs_n = tl.arange(0, BLOCK_N)
    mask_l = offs_l < L
    t = c * L + offs_l
    a = tl.load(a_ptr + (b * T + t) * H + h, mask=mask_l, other=0.0)
    acum = tl.cumsum(a, 0)
    tl.store(acum_ptr + ((b * H + h) * NC + c) * L + offs_l, acum, mask=mask_l)
    total = tl.sum(tl.where(offs_l == L - 1, acum, 0.0), 0)
    decay = tl.where(mask_l, tl.exp(total - acum), 0.0)
    x = tl.load(x_ptr + b * stride_xb + t[:, None] * stride_xt + h * stride_xh + offs_p[None, :] * stride_xp,
                mask=mask_l[:, None] & (offs_p[None, :] < P), other=0.0)
    bm = tl.load(b_ptr + ((b * T + t[:, None]) * H + h) * N + offs_n[None, :],
                 mask=mask_l[:, None] & (offs_n[None, :] < N), other=0.0)
    # (P x L) @ (L x N): the chunk's state, every product in fp32
    st = tl.dot(tl.trans(x * decay[:, None]), bm, input_precision="ieee")
    st_base = st_ptr + (((b * NC + c) * H + h) * P) * N
    tl.store(st_base + offs_p[:, None] * N + offs_n[None, :], st,
             mask=(offs_p[:, None] < P) & (offs_n[None, :] < N))


@triton.jit
def ssd_state_passing_kernel(acum_ptr, st_ptr, H, NC, L, P, N, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_bh = tl.program_id(0)
    b = pid_bh // H
    h = pid_bh % H
    offs_p = tl.arange(0, BLOCK_P)
    offs_n = tl.arange(0, BLOCK_N)
    mask = (offs_p[:, None] < P) & (offs_n[None, :] < N)
    tile = offs_p[:, None] * N + offs_n[None, :]
    state = tl.zeros((BLOCK_P, BLOCK_N), dtype=tl.float32)
    for c in range(0, NC):
        base = st_ptr + (((b * NC + c) * H + h) * P) * N
        own = tl.load(base + tile, mask=mask, other=0.0)
        tl.store(base + tile, state, mask=mask)  # the state entering chunk c replaces the chunk's own
        total = tl.load(acum_ptr + ((b * H + h) * NC + c) * L + L - 1)
        state = tl.exp(total) * state + own


@triton.jit
def ssd_chunk_output_kernel(x_ptr, b_ptr, c_ptr, acum_ptr, st_ptr, y_ptr, H, T, NC, L, P, N,
                            stride_xb, stride_xt, stride_xh, stride_xp,
                            BLOCK_L: tl.constexpr, BLOCK_P: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_bh = tl.program_id(0)
    c = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    offs_l = tl.arange(0, BLOCK_L)
    offs_s = tl.arange(0, BLOCK_L)
    offs_p = tl.arange(0, BLOCK_P)
    offs_n = tl.arange(0, BLOCK_N)
    mask_l = offs_l < L
    mask_p = offs_p < P
    mask_n = offs_n < N
    t = c * L + offs_l
    acum = tl.load(acum_ptr + ((b * H + h) * NC + c) * L + offs_l, mask=mask_l, other=0.0)
    cm = tl.load(c_ptr + ((b * T + t[:, None]) * H + h) * N + offs_n[None, :],
                 mask=mask_l[:, None] & mask_n[None, :], other=0.0)
    bm = tl.load(b_ptr + ((b * T + t[:, None]) * H + h) * N + offs_n[None, :],
                 mask=mask_l[:, None] & mask_n[None, :], other=0.0)
    x = tl.load(x_ptr + b * stride_xb + t[:, None] * stride_xt + h * stride_xh + offs_p[None, :] * stride_xp,
                mask=mask_l[:, None] & mask_p[None, :], other=0.0)
    g = tl.dot(cm, tl.trans(bm), input_precision="ieee")  # (L x L): C[l] . B[s]
    causal = (offs_s[None, :] <= offs_l[:, None]) & (offs_s[None, :] < L)
    decay = tl.where(causal, tl.exp(acum[:, None] - acum[None, :]), 0.0)
    y = tl.dot(g * decay, x, input_precision="ieee")
    st = tl.load(st_ptr + (((b * NC + c) * H + h) * P) * N + offs_p[:, None] * N + offs_n[None, :],
                 mask=mask_p[:, None] & mask_n[None, :], other=0.0)
    y += tl.dot(cm, tl.trans(st), input_precision="ieee") * tl.exp(acum)[:, None]
    tl.store(y_ptr + ((b * T + t[:, None]) * H + h) * P + offs_p[None, :], y, mask=mask_l[:, None] & mask_p[None, :])


def ssd_forward(X: torch.Tensor, A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, block_len: int) -> torch.Tensor:
    """Y of reference.Model.forward for X (batch, seq, heads, d_head) and the model's A, B, C."""
    bs, T, H, P = X.shape
    N = B.shape[-1]
    L = block_len
    NC = T // L if L else 0
    y = torch.empty((bs, T, H, P), device=X.device, dtype=torch.float32)
    if y.numel() == 0 or N == 0 or NC == 0:
        return y.zero_() if y.numel() else y
    A, B, C = A.contiguous(), B.contiguous(), C.contiguous()
    acum = torch.empty((bs, H, NC, L), device=X.device, dtype=torch.float32)
    st = torch.empty((bs, NC, H, P, N), device=X.device, dtype=torch.float32)
    blocks = dict(BLOCK_L=max(16, triton.next_power_of_2(L)), BLOCK_P=max(16, triton.next_power_of_2(P)),
                  BLOCK_N=max(16, triton.next_power_of_2(N)))
    sx = X.stride()
    ssd_chunk_state_kernel[(bs * H, NC)](X, A, B, acum, st, H, T, NC, L, P, N, *sx, **blocks)
    ssd_state_passing_kernel[(bs * H,)](acum, st, H, NC, L, P, N, BLOCK_P=blocks["BLOCK_P"],
                                        BLOCK_N=blocks["BLOCK_N"])
    ssd_chunk_output_kernel[(bs * H, NC)](X, B, C, acum, st, y, H, T, NC, L, P, N, *sx, **blocks)
    return y


class ModelNew(nn.Module):
    def __init__(self, batch_size, seq_length, n_heads, d_head, d_state, block_len=64):
        super().__init__()
        assert seq_length % block_len == 0, "Sequence length must be divisible by block length"
        self.block_len = block_len
        self.A = nn.Parameter(torch.randn(batch_size, seq_length, n_heads))
        self.B = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))
        self.C = nn.Parameter(torch.randn(batch_size, seq_length, n_heads, d_state))

    def forward(self, X, initial_states=None):
        return ssd_forward(X, self.A, self.B, self.C, self.block_len)
